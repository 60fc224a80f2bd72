// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the container forwarder, one per line:
 *   container PREFIX port N mac MAC   frames to PREFIX (IPv4 or IPv6) go to port N, to the container's MAC
 *   client MAC port N mac MAC2        frames from source MAC go to port N (to MAC2), whatever their address
 *   uplink via MAC from MAC2          frames leaving by the uplink go to MAC, from MAC2
 */
#include <arpa/inet.h> /* before the linux headers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include "fwd.h"

#define MAX_TOKENS 8

static const char *const fwd_maps[] = { "fwd_by_ip", "fwd_by_ip6", "fwd_by_mac", "fwd_uplink_cfg", NULL };

static int parse_container_port(const char *text, __u32 *port, char *err, size_t errlen)
{
	return xnf_rules_parse_number(text, 1, XNF_MAX_PORTS - 1, "container port (1-7; port 0 is the uplink)",
				      port, err, errlen);
}

/* ADDR[/LEN], IPv4 or IPv6, into its map's key and map. */
static int parse_prefix(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct xnf_prefix prefix;

	if (xnf_rules_parse_prefix(text, false, &prefix, err, errlen))
		return -1;
	if (prefix.family == AF_INET6) {
		struct fwd_ip6_key key = { .prefixlen = prefix.len };

		memcpy(key.addr, prefix.bytes, 16);
		memcpy(entry->key, &key, sizeof(key));
		entry->map = "fwd_by_ip6";
	} else {
		struct fwd_ip_key key = { .prefixlen = prefix.len };

		memcpy(key.addr, prefix.bytes, 4);
		memcpy(entry->key, &key, sizeof(key));
		entry->map = "fwd_by_ip";
	}
	return 0;
}

static int fwd_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	struct fwd_target target = { 0 };
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok >= 1 && strcmp(tok[0], "container") == 0) {
		if (ntok != 6 || strcmp(tok[2], "port") || strcmp(tok[4], "mac")) {
			snprintf(err, errlen, "a container reads: container PREFIX port N mac MAC");
			return -1;
		}
		if (parse_prefix(tok[1], entry, err, errlen) || parse_container_port(tok[3], &target.port, err, errlen) ||
		    xnf_rules_parse_mac(tok[5], target.mac, err, errlen))
			return -1;
	} else if (ntok >= 1 && strcmp(tok[0], "client") == 0) {
		struct fwd_mac_key key = { 0 };

		if (ntok != 6 || strcmp(tok[2], "port") || strcmp(tok[4], "mac")) {
			snprintf(err, errlen, "a client pin reads: client MAC port N mac MAC");
			return -1;
		}
		if (xnf_rules_parse_mac(tok[1], key.mac, err, errlen) || parse_container_port(tok[3], &target.port, err, errlen) ||
		    xnf_rules_parse_mac(tok[5], target.mac, err, errlen))
			return -1;
		entry->map = "fwd_by_mac";
		memcpy(entry->key, &key, sizeof(key));
	} else if (ntok >= 1 && strcmp(tok[0], "uplink") == 0) {
		struct fwd_uplink up = { .set = 1 };
		__u32 zero = 0;

		if (ntok != 5 || strcmp(tok[1], "via") || strcmp(tok[3], "from")) {
			snprintf(err, errlen, "the uplink reads: uplink via MAC from MAC");
			return -1;
		}
		if (xnf_rules_parse_mac(tok[2], up.next_hop, err, errlen) || xnf_rules_parse_mac(tok[4], up.source, err, errlen))
			return -1;
		entry->map = "fwd_uplink_cfg";
		memcpy(entry->key, &zero, sizeof(zero));
		memcpy(entry->value, &up, sizeof(up));
		entry->reset_on_delete = true;
		return 0;
	} else {
		snprintf(err, errlen, "unknown line: start it with container, client or uplink");
		return -1;
	}
	memcpy(entry->value, &target, sizeof(target));
	return 0;
}

static int fwd_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	char a[24], b[24], addr[INET6_ADDRSTRLEN];

	if (strcmp(map, "fwd_uplink_cfg") == 0) {
		const struct fwd_uplink *up = value;

		if (!up->set)
			return -1;
		xnf_rules_format_mac(up->next_hop, a, sizeof(a));
		xnf_rules_format_mac(up->source, b, sizeof(b));
		snprintf(out, outlen, "uplink via %s from %s", a, b);
		return 0;
	}
	const struct fwd_target *t = value;

	xnf_rules_format_mac(t->mac, b, sizeof(b));
	if (strcmp(map, "fwd_by_mac") == 0) {
		xnf_rules_format_mac(((const struct fwd_mac_key *)key)->mac, a, sizeof(a));
		snprintf(out, outlen, "client %s port %u mac %s", a, t->port, b);
		return 0;
	}
	if (strcmp(map, "fwd_by_ip6") == 0) {
		const struct fwd_ip6_key *k6 = key;

		inet_ntop(AF_INET6, k6->addr, addr, sizeof(addr));
		snprintf(out, outlen, "container %s/%u port %u mac %s", addr, k6->prefixlen, t->port, b);
		return 0;
	}
	const struct fwd_ip_key *k = key;

	inet_ntop(AF_INET, k->addr, addr, sizeof(addr));
	snprintf(out, outlen, "container %s/%u port %u mac %s", addr, k->prefixlen, t->port, b);
	return 0;
}

static const struct xnf_rules_codec fwd_codec = {
	.syntax = "container PREFIX port N mac MAC | client MAC port N mac MAC | uplink via MAC from MAC",
	.maps = fwd_maps,
	.parse = fwd_parse,
	.format = fwd_format,
};

XNF_EXPORT_RULES(fwd, &fwd_codec);
