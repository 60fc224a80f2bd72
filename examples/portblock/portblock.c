/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * portblock: drops TCP and UDP packets sent to a blocked destination port and forwards everything else.
 * An example of an NF written outside xnf's repository: it includes <xnf/nf.h> only and builds with
 * `xnf build examples/portblock` (or `make` here, against an installed xnf).
 */
#include <xnf/nf.h>
#include "portblock.h"

XNF_MAP_HASH(portblock_ports, struct portblock_key, __u32, PORTBLOCK_MAX_RULES);
XNF_COUNTER_NAMES("blocked", "passed", "no_port");

static __always_inline int destination_port(const struct xnf_headers *h, struct portblock_key *key)
{
	if (h->tcp)
		key->port = h->tcp->dest;
	else if (h->udp)
		key->port = h->udp->dest;
	else
		return -1;
	key->proto = h->l4_proto;
	key->pad = 0;
	return 0;
}

static __always_inline xnf_verdict portblock(struct xnf_pkt *pkt)
{
	struct portblock_key key;
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (destination_port(&h, &key) < 0) {
		xnf_count_event(PORTBLOCK_NO_PORT);
		return xnf_forward(pkt);
	}
	if (xnf_map_lookup(&portblock_ports, &key)) {
		xnf_count_event(PORTBLOCK_BLOCKED);
		return XNF_DROP;
	}
	xnf_count_event(PORTBLOCK_PASSED);
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(portblock);
