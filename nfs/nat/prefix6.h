/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * NPTv6 (RFC 6296): IPv6 prefix translation, the NAT's IPv6 side. Stateless: an inside prefix is swapped for an
 * outside one of the same length on the way out, back on the way in, and one 16-bit word after the prefix is
 * adjusted so that the address adds up to what it did: the L4 checksums stay right without being touched. No
 * sessions, no ports, no filtering: what comes in for the outside prefix goes to the inside.
 * nat.c sends what is translated: out of the outside port for a source, to the local stack for a destination.
 */
#ifndef XNF_NF_NAT_PREFIX6_H
#define XNF_NF_NAT_PREFIX6_H

#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "nat.h"

/* Written by the rules (keyed by the inside prefix), and its reverse built by the commit step. */
XNF_RULES_LPM(nat_prefix6_out, struct nat_prefix6_key, struct nat_prefix6, NAT_MAX_PREFIXES6);
XNF_RULES_LPM(nat_prefix6_in, struct nat_prefix6_key, struct nat_prefix6, NAT_MAX_PREFIXES6);
/* The box's own IPv6 addresses (read at start): what the inside sends them is the local stack's. */
XNF_MAP_HASH(nat_local6, struct nat_local6_addr, __u32, NAT_MAX_LOCAL_ADDRS);

/* Whether a frame from the inside is one to forward out: not to a link (neighbour discovery, multicast,
 * link-local) and not to the box itself. */
static __always_inline int nat_prefix6_leaves(const struct xnf_headers *h)
{
	struct nat_local6_addr key;

	if (xnf_is_link_scope(h))
		return 0;
	__builtin_memcpy(key.addr, &h->ip6->daddr, 16);
	return !xnf_map_lookup(&nat_local6, &key);
}

/* a + b in ones' complement arithmetic; 0xffff comes out as 0 (RFC 6296 3.5). */
static __always_inline __u16 nat_ones_add(__u16 a, __u16 b)
{
	__u16 sum = (__u16)~xnf_csum_fold((__u32)a + b);

	return sum == 0xffff ? 0 : sum;
}

/* The address's first len bits from to, the rest kept (to's bits after len are zero). */
static __always_inline void nat_prefix6_copy(__u8 *addr, const __u8 *to, __u32 len)
{
	for (int i = 0; i < NAT_MAX_PREFIX6_LEN / 8; i++) {
		__u32 first = (__u32)i * 8;
		__u8 keep;

		if (first >= len)
			break;
		keep = first + 8 > len ? (__u8)(0xff >> (len - first)) : 0;
		addr[i] = (__u8)((addr[i] & keep) | to[i]);
	}
}

/* Translates addr by the prefix found for it: the prefix swapped, the adjustment added to the subnet word for /48
 * and shorter, else to the first interface-identifier word that is not 0xffff. 0, or -1 when every such word is
 * 0xffff (RFC 6296 3.7: such an address is not translated). */
static __always_inline int nat_prefix6_translate(__u8 *addr, const struct nat_prefix6 *to)
{
	__u16 *words = (__u16 *)addr;
	__u32 len = to->len;

	nat_prefix6_copy(addr, to->addr, len);
	if (len <= 48) {
		words[3] = nat_ones_add(words[3], to->adjustment);
		return 0;
	}
	for (int i = 4; i < 8; i++) {
		if (words[i] != 0xffff) {
			words[i] = nat_ones_add(words[i], to->adjustment);
			return 0;
		}
	}
	return -1;
}

/* Translates addr by the table's prefix it falls in: 1, 0 when it falls in none, -1 when it cannot be translated. */
static __always_inline int nat_prefix6_map(xnf_rules_table_t table, __u8 *addr)
{
	struct nat_prefix6_key key = { .prefixlen = 128 };
	struct nat_prefix6 *to;

	if (!table)
		return 0;
	__builtin_memcpy(key.addr, addr, 16);
	to = xnf_rules_table_lookup(table, &key);
	if (!to)
		return 0;
	return nat_prefix6_translate(addr, to) ? -1 : 1;
}

#endif
