// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Routes of the router, one per line:
 *   route PREFIX via MAC port N     forward to the next hop MAC out of port N
 *   local PREFIX                    to this host's own stack
 *   port N mac MAC                  source MAC of frames leaving port N
 *   fib kernel|own                  route by the host's table, or by these lines (the default)
 * PREFIX is IPv4 or IPv6 with /length; its host bits must be zero.
 */
#include <arpa/inet.h> /* before the linux headers */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include "router.h"

#define MAX_TOKENS 8

static const char *const rt_maps[] = { "rt4", "rt6", "rt_port_mac", "rt_config", NULL };

static int parse_port(const char *text, __u32 *port, char *err, size_t errlen)
{
	return xnf_rules_parse_number(text, 0, XNF_MAX_PORTS - 1, "port number (0-7, in --iface order)", port,
				      err, errlen);
}

/* Fills the LPM key for PREFIX/LEN; the map is rt4 or rt6 by family. */
static int parse_prefix(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct xnf_prefix prefix;

	if (xnf_rules_parse_prefix(text, true, &prefix, err, errlen))
		return -1;
	memcpy(entry->key, &prefix.len, sizeof(prefix.len));
	memcpy(entry->key + sizeof(prefix.len), prefix.bytes, prefix.family == AF_INET6 ? 16 : 4);
	entry->map = prefix.family == AF_INET6 ? "rt6" : "rt4";
	return 0;
}

static int rt_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	struct rt_nexthop nh = { 0 };
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok >= 1 && strcmp(tok[0], "route") == 0) {
		if (ntok != 6 || strcmp(tok[2], "via") || strcmp(tok[4], "port")) {
			snprintf(err, errlen, "a route reads: route PREFIX via MAC port N");
			return -1;
		}
		if (parse_prefix(tok[1], entry, err, errlen) || xnf_rules_parse_mac(tok[3], nh.mac, err, errlen) ||
		    parse_port(tok[5], &nh.port, err, errlen))
			return -1;
	} else if (ntok >= 1 && strcmp(tok[0], "local") == 0) {
		if (ntok != 2) {
			snprintf(err, errlen, "a local prefix reads: local PREFIX");
			return -1;
		}
		if (parse_prefix(tok[1], entry, err, errlen))
			return -1;
		nh.port = RT_LOCAL_PORT;
	} else if (ntok >= 1 && strcmp(tok[0], "port") == 0) {
		struct rt_port_mac pm = { .set = 1 };
		__u32 port;

		if (ntok != 4 || strcmp(tok[2], "mac")) {
			snprintf(err, errlen, "a port's source MAC reads: port N mac MAC");
			return -1;
		}
		if (parse_port(tok[1], &port, err, errlen) || xnf_rules_parse_mac(tok[3], pm.mac, err, errlen))
			return -1;
		entry->map = "rt_port_mac";
		memcpy(entry->key, &port, sizeof(port));
		memcpy(entry->value, &pm, sizeof(pm));
		entry->reset_on_delete = true;
		return 0;
	} else if (ntok >= 1 && strcmp(tok[0], "fib") == 0) {
		__u32 slot = RT_SETTING_FIB_KERNEL, kernel;

		if (ntok != 2 || (strcmp(tok[1], "kernel") && strcmp(tok[1], "own"))) {
			snprintf(err, errlen, "the table to route by reads: fib kernel (the host's) or fib own (these lines)");
			return -1;
		}
		kernel = strcmp(tok[1], "kernel") == 0;
		entry->map = "rt_config";
		memcpy(entry->key, &slot, sizeof(slot));
		memcpy(entry->value, &kernel, sizeof(kernel));
		entry->reset_on_delete = true;
		return 0;
	} else {
		snprintf(err, errlen, "unknown line: start it with route, local, port or fib");
		return -1;
	}
	memcpy(entry->value, &nh, sizeof(nh));
	return 0;
}

static void format_prefix(const char *map, const void *key, char *out, size_t len)
{
	bool v6 = strcmp(map, "rt6") == 0;
	char addr[INET6_ADDRSTRLEN];
	__u32 prefixlen;

	memcpy(&prefixlen, key, sizeof(prefixlen));
	inet_ntop(v6 ? AF_INET6 : AF_INET, (const __u8 *)key + sizeof(prefixlen), addr, sizeof(addr));
	snprintf(out, len, "%s/%u", addr, prefixlen);
}

static int rt_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	char prefix[INET6_ADDRSTRLEN + 8];

	if (strcmp(map, "rt_config") == 0) {
		if (!*(const __u32 *)value)
			return -1; /* own tables: the default, no line */
		snprintf(out, outlen, "fib kernel");
		return 0;
	}
	if (strcmp(map, "rt_port_mac") == 0) {
		const struct rt_port_mac *pm = value;

		if (!pm->set)
			return -1; /* an unset slot is no rule */
		char mac[24];

		xnf_rules_format_mac(pm->mac, mac, sizeof(mac));
		snprintf(out, outlen, "port %u mac %s", *(const __u32 *)key, mac);
		return 0;
	}
	const struct rt_nexthop *nh = value;
	char mac[24];

	format_prefix(map, key, prefix, sizeof(prefix));
	xnf_rules_format_mac(nh->mac, mac, sizeof(mac));
	if (nh->port == RT_LOCAL_PORT)
		snprintf(out, outlen, "local %s", prefix);
	else
		snprintf(out, outlen, "route %s via %s port %u", prefix, mac, nh->port);
	return 0;
}

static const struct xnf_rules_codec rt_codec = {
	.syntax = "route PREFIX via MAC port N | local PREFIX | port N mac MAC | fib kernel|own",
	.maps = rt_maps,
	.parse = rt_parse,
	.format = rt_format,
};

static const struct xnf_nf_option rt_options[] = {
	{ "fib", "kernel|own",
	  "route by the host's routing table (bpf_fib_lookup in XDP; a mirror kept\n"
	  "from rtnetlink in user space) or by the routes file (own, the default)", "fib %s" },
	{ 0 },
};

XNF_EXPORT_RULES(router, &rt_codec);
XNF_EXPORT_OPTIONS(router, rt_options);
