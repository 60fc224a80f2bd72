// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the NAT, one per line (nfs/nat/README.md):
 *   inside port N
 *   inside from PREFIX
 *   outside port N gateway MAC
 *   public ADDR [ports LO-HI]
 *   timeout tcp|udp|icmp|tcp-closing SECONDS
 *   forward tcp|udp PORT to ADDR PORT mac MAC
 *   prefix6 INSIDE/LEN to OUTSIDE/LEN
 * Ports are numbered in --iface order from 0. inside port, outside and timeout lines are settings: given again, one
 * replaces the one before; an inside from line is keyed by its prefix, a public line by its address (up to 16), a
 * forward by its protocol and port.
 */
#include <arpa/inet.h> /* before the linux headers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include <xnf/csum.h>
#include "nat.h"

#define MAX_TOKENS 10
#define DEFAULT_PORT_LO 1024
#define DEFAULT_PORT_HI 65535

static const char *const nat_maps[] = { "nat_config", "nat_outside", "nat_public_set", "nat_forwards", "nat_inside_rules",
				       "nat_prefix6_out", NULL };
static const char *const timeout_names[] = { [NAT_SETTING_TIMEOUT_TCP_S] = "tcp", [NAT_SETTING_TIMEOUT_UDP_S] = "udp",
					     [NAT_SETTING_TIMEOUT_ICMP_S] = "icmp",
					     [NAT_SETTING_TIMEOUT_TCP_CLOSING_S] = "tcp-closing" };

static void set_slot(struct xnf_rule_entry *entry, const char *map, __u32 slot, const void *value, size_t size)
{
	entry->map = map;
	memcpy(entry->key, &slot, sizeof(slot));
	memcpy(entry->value, value, size);
	entry->reset_on_delete = true;
}

static int parse_port_index(const char *word, __u32 *port, char *err, size_t errlen)
{
	return xnf_rules_parse_number(word, 0, XNF_MAX_PORTS - 1, "port index (0-7, in --iface order)", port, err,
				      errlen);
}

/* An inside prefix, keyed by itself. */
static int parse_inside_prefix(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct nat_inside_prefix key = { 0 };
	struct xnf_prefix prefix;
	__u32 in = 1;

	if (xnf_rules_parse_prefix(text, false, &prefix, err, errlen))
		return -1;
	if (prefix.family != AF_INET) {
		snprintf(err, errlen, "'%s' is not an IPv4 prefix: the NAT translates IPv4 (NAT44)", text);
		return -1;
	}
	key.prefixlen = prefix.len;
	memcpy(&key.addr, prefix.bytes, sizeof(key.addr));
	entry->map = "nat_inside_rules";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &in, sizeof(in));
	return 0;
}

static int parse_inside(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	__u32 port, value;

	if (ntok == 3 && strcmp(tok[1], "from") == 0)
		return parse_inside_prefix(tok[2], entry, err, errlen);
	if (ntok != 3 || strcmp(tok[1], "port")) {
		snprintf(err, errlen, "the inside reads: inside port N, or inside from PREFIX");
		return -1;
	}
	if (parse_port_index(tok[2], &port, err, errlen))
		return -1;
	value = port + 1;
	set_slot(entry, "nat_config", NAT_SETTING_INSIDE_PORT, &value, sizeof(value));
	return 0;
}

static int parse_outside(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct nat_outside outside = { .set = 1 };

	if (ntok != 5 || strcmp(tok[1], "port") || strcmp(tok[3], "gateway")) {
		snprintf(err, errlen, "the outside reads: outside port N gateway MAC");
		return -1;
	}
	if (parse_port_index(tok[2], &outside.port, err, errlen) ||
	    xnf_rules_parse_mac(tok[4], outside.gateway_mac, err, errlen))
		return -1;
	set_slot(entry, "nat_outside", 0, &outside, sizeof(outside));
	return 0;
}

static int parse_public(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct nat_public_ports pub = { .port_lo = DEFAULT_PORT_LO, .port_hi = DEFAULT_PORT_HI };
	struct nat_local_addr key = { 0 };
	__u32 lo, hi;

	if ((ntok != 2 && ntok != 4) || (ntok == 4 && strcmp(tok[2], "ports"))) {
		snprintf(err, errlen, "the public side reads: public ADDR [ports LO-HI]");
		return -1;
	}
	if (xnf_rules_parse_unicast_ipv4(tok[1], "public address (the NAT translates IPv4, NAT44)", &key.addr, err,
					 errlen))
		return -1;
	if (ntok == 4 && xnf_rules_parse_range(tok[3], 1, 65535, "public port", &lo, &hi, err, errlen))
		return -1;
	if (ntok == 4) {
		pub.port_lo = (__u16)lo;
		pub.port_hi = (__u16)hi;
	}
	entry->map = "nat_public_set";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &pub, sizeof(pub));
	return 0;
}

static int parse_timeout(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	__u32 seconds;

	if (ntok != 3) {
		snprintf(err, errlen, "a timeout reads: timeout tcp|udp|icmp|tcp-closing SECONDS");
		return -1;
	}
	for (__u32 slot = NAT_SETTING_TIMEOUT_TCP_S; slot <= NAT_SETTING_TIMEOUT_TCP_CLOSING_S; slot++) {
		if (strcmp(tok[1], timeout_names[slot]))
			continue;
		if (xnf_rules_parse_number(tok[2], 1, 604800, "timeout in seconds (1-604800)", &seconds, err, errlen))
			return -1;
		set_slot(entry, "nat_config", slot, &seconds, sizeof(seconds));
		return 0;
	}
	snprintf(err, errlen, "timeout '%s': give tcp, udp, icmp or tcp-closing", tok[1]);
	return -1;
}

static int parse_forward(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct nat_public_key key = { 0 };
	struct nat_forward forward = { 0 };

	if (ntok != 8 || strcmp(tok[3], "to") || strcmp(tok[6], "mac")) {
		snprintf(err, errlen, "a port forward reads: forward tcp|udp PORT to ADDR PORT mac MAC");
		return -1;
	}
	if (xnf_rules_parse_tcp_udp(tok[1], &key.proto, err, errlen) ||
	    xnf_rules_parse_l4_port(tok[2], 1, &key.port, err, errlen))
		return -1;
	if (xnf_rules_parse_unicast_ipv4(tok[4], "inside address (the NAT translates IPv4, NAT44)",
					 &forward.inside.addr, err, errlen))
		return -1;
	if (xnf_rules_parse_l4_port(tok[5], 1, &forward.inside.port, err, errlen) ||
	    xnf_rules_parse_mac(tok[7], forward.mac, err, errlen))
		return -1;
	forward.inside.proto = key.proto;
	entry->map = "nat_forwards";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &forward, sizeof(forward));
	return 0;
}

/* The ones' complement sum of an address's 16-bit words (in host order). */
static __u16 ones_sum(const __u8 *addr)
{
	__u32 sum = 0;

	for (int i = 0; i < 16; i += 2)
		sum += (__u32)(addr[i] << 8 | addr[i + 1]);
	return (__u16)~xnf_csum_fold(sum);
}

/* An IPv6 prefix of NPTv6: a length from 1 to NAT_MAX_PREFIX6_LEN. */
static int parse_prefix6(const char *text, struct xnf_prefix *prefix, char *err, size_t errlen)
{
	if (xnf_rules_parse_prefix(text, true, prefix, err, errlen))
		return -1;
	if (prefix->family != AF_INET6 || !prefix->len || prefix->len > NAT_MAX_PREFIX6_LEN) {
		snprintf(err, errlen, "'%s': NPTv6 translates IPv6 prefixes of /1 to /%d", text, NAT_MAX_PREFIX6_LEN);
		return -1;
	}
	return 0;
}

/* prefix6 INSIDE/LEN to OUTSIDE/LEN, keyed by the inside prefix: the outside prefix and the adjustment that keeps
 * an address's sum (RFC 6296 3.2: the inside prefix's sum less the outside one's, in ones' complement). */
static int parse_prefix6_pair(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct nat_prefix6_key key = { 0 };
	struct nat_prefix6 to = { 0 };
	struct xnf_prefix in, out;

	if (ntok != 4 || strcmp(tok[2], "to")) {
		snprintf(err, errlen, "an IPv6 prefix translation reads: prefix6 INSIDE/LEN to OUTSIDE/LEN");
		return -1;
	}
	if (parse_prefix6(tok[1], &in, err, errlen) || parse_prefix6(tok[3], &out, err, errlen))
		return -1;
	if (in.len != out.len) {
		snprintf(err, errlen, "%s and %s: NPTv6 swaps prefixes of one length", tok[1], tok[3]);
		return -1;
	}
	key.prefixlen = in.len;
	memcpy(key.addr, in.bytes, 16);
	memcpy(to.addr, out.bytes, 16);
	to.len = (__u8)in.len;
	to.adjustment = htons((__u16)~xnf_csum_fold((__u32)ones_sum(in.bytes) + (__u16)~ones_sum(out.bytes)));
	entry->map = "nat_prefix6_out";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &to, sizeof(to));
	return 0;
}

static int nat_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok >= 1 && strcmp(tok[0], "inside") == 0)
		return parse_inside(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "outside") == 0)
		return parse_outside(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "public") == 0)
		return parse_public(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "timeout") == 0)
		return parse_timeout(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "forward") == 0)
		return parse_forward(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "prefix6") == 0)
		return parse_prefix6_pair(tok, ntok, entry, err, errlen);
	snprintf(err, errlen, "unknown line: start it with inside, outside, public, timeout, forward or prefix6");
	return -1;
}

static int format_config(__u32 slot, __u32 value, char *out, size_t outlen)
{
	if (!value)
		return -1;
	if (slot == NAT_SETTING_INSIDE_PORT)
		snprintf(out, outlen, "inside port %u", value - 1);
	else if (slot >= NAT_SETTING_TIMEOUT_TCP_S && slot <= NAT_SETTING_TIMEOUT_TCP_CLOSING_S)
		snprintf(out, outlen, "timeout %s %u", timeout_names[slot], value);
	else
		return -1;
	return 0;
}

static int nat_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	__u32 slot;

	memcpy(&slot, key, sizeof(slot));
	if (strcmp(map, "nat_config") == 0) {
		__u32 number;

		memcpy(&number, value, sizeof(number));
		return format_config(slot, number, out, outlen);
	}
	if (strcmp(map, "nat_forwards") == 0) {
		const struct nat_public_key *k = key;
		const struct nat_forward *f = value;
		char addr[INET_ADDRSTRLEN], mac[24];

		inet_ntop(AF_INET, &f->inside.addr, addr, sizeof(addr));
		xnf_rules_format_mac(f->mac, mac, sizeof(mac));
		snprintf(out, outlen, "forward %s %u to %s %u mac %s", k->proto == IPPROTO_TCP ? "tcp" : "udp",
			 ntohs(k->port), addr, ntohs(f->inside.port), mac);
		return 0;
	}
	if (strcmp(map, "nat_inside_rules") == 0) {
		const struct nat_inside_prefix *k = key;
		char addr[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &k->addr, addr, sizeof(addr));
		snprintf(out, outlen, "inside from %s/%u", addr, k->prefixlen);
		return 0;
	}
	if (strcmp(map, "nat_prefix6_out") == 0) {
		const struct nat_prefix6_key *k = key;
		const struct nat_prefix6 *to = value;
		char inside[INET6_ADDRSTRLEN], outside[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, k->addr, inside, sizeof(inside));
		inet_ntop(AF_INET6, to->addr, outside, sizeof(outside));
		snprintf(out, outlen, "prefix6 %s/%u to %s/%u", inside, k->prefixlen, outside, to->len);
		return 0;
	}
	if (strcmp(map, "nat_outside") == 0) {
		const struct nat_outside *o = value;
		char mac[24];

		if (!o->set)
			return -1;
		xnf_rules_format_mac(o->gateway_mac, mac, sizeof(mac));
		snprintf(out, outlen, "outside port %u gateway %s", o->port, mac);
		return 0;
	}
	const struct nat_public_ports *pub = value;
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, key, addr, sizeof(addr));
	snprintf(out, outlen, "public %s ports %u-%u", addr, pub->port_lo, pub->port_hi);
	return 0;
}

int nat_commit(const struct xnf_rules_target *maps, char *err, size_t errlen);

static const struct xnf_rules_codec nat_codec = {
	.syntax = "inside port N | inside from PREFIX | outside port N gateway MAC | public ADDR [ports LO-HI] | "
		  "timeout tcp|udp|icmp|tcp-closing SECONDS | forward tcp|udp PORT to ADDR PORT mac MAC | "
		  "prefix6 INSIDE/LEN to OUTSIDE/LEN",
	.maps = nat_maps,
	.parse = nat_parse,
	.format = nat_format,
	.commit = nat_commit,
};

XNF_EXPORT_RULES(nat, &nat_codec);
