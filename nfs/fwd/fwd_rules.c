// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the container forwarder, one per line:
 *   container PREFIX port N mac MAC   frames to PREFIX (IPv4 or IPv6) go to port N, to the container's MAC
 *   client MAC port N mac MAC2        frames from source MAC go to port N (to MAC2), whatever their address
 *   uplink via MAC from MAC2          frames leaving by the uplink go to MAC, from MAC2
 *   vlan ID port N                    the uplink's VLAN ID (802.1Q) bridged to port N: its frames go there untagged,
 *                                     port N's leave the uplink tagged; a port bridges one VLAN
 */
#include <arpa/inet.h> /* before the linux headers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include "fwd.h"

#define MAX_TOKENS 8

static const char *const fwd_maps[] = { "fwd_by_ip", "fwd_by_ip6", "fwd_by_mac", "fwd_uplink_cfg", "fwd_by_vlan",
					NULL };

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

/* vlan ID port N */
static int parse_vlan(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct fwd_vlan_key key = { 0 };
	__u16 ids[2];
	__u32 port;

	if (ntok != 4 || strcmp(tok[2], "port")) {
		snprintf(err, errlen, "a VLAN reads: vlan ID port N");
		return -1;
	}
	if (xnf_rules_parse_vlan(tok[1], ids, err, errlen) || parse_container_port(tok[3], &port, err, errlen))
		return -1;
	if (ids[1]) {
		snprintf(err, errlen, "the uplink's VLANs are 802.1Q ids: give vlan ID, not OUTER.INNER");
		return -1;
	}
	key.id = ids[0];
	entry->map = "fwd_by_vlan";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &port, sizeof(port));
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
	} else if (ntok >= 1 && strcmp(tok[0], "vlan") == 0) {
		return parse_vlan(tok, ntok, entry, err, errlen);
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
		snprintf(err, errlen, "unknown line: start it with container, client, uplink or vlan");
		return -1;
	}
	memcpy(entry->value, &target, sizeof(target));
	return 0;
}

static int fwd_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	char a[24], b[24], addr[INET6_ADDRSTRLEN];

	if (strcmp(map, "fwd_by_vlan") == 0) {
		snprintf(out, outlen, "vlan %u port %u", ((const struct fwd_vlan_key *)key)->id, *(const __u32 *)value);
		return 0;
	}
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

/* fwd_port_vlan from fwd_by_vlan, after every change of the rules: each port's VLAN, or 0. */
static int fwd_commit(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	__u32 vlan_of[XNF_MAX_PORTS] = { 0 }, port;
	struct fwd_vlan_key key, next;
	struct xnf_map_ref by_vlan, port_vlan;
	int more;

	if (xnf_map_find(maps, "fwd_by_vlan", &by_vlan) || xnf_map_find(maps, "fwd_port_vlan", &port_vlan)) {
		snprintf(err, errlen, "the forwarder's VLAN maps are missing");
		return -1;
	}
	for (more = xnf_map_ref_next_key(&by_vlan, NULL, &next) == 0; more;
	     more = xnf_map_ref_next_key(&by_vlan, &key, &next) == 0) {
		key = next;
		if (xnf_map_ref_lookup(&by_vlan, &key, &port) || port >= XNF_MAX_PORTS)
			continue;
		if (vlan_of[port] && vlan_of[port] != key.id) {
			snprintf(err, errlen, "port %u is given VLANs %u and %u: a container port bridges one VLAN", port,
				 vlan_of[port] < key.id ? vlan_of[port] : key.id, vlan_of[port] < key.id ? key.id : vlan_of[port]);
			return -1;
		}
		vlan_of[port] = key.id;
	}
	for (port = 0; port < XNF_MAX_PORTS; port++) {
		if (xnf_map_ref_update(&port_vlan, &port, &vlan_of[port], BPF_ANY)) {
			snprintf(err, errlen, "cannot write the ports' VLANs");
			return -1;
		}
	}
	return 0;
}

static const struct xnf_rules_codec fwd_codec = {
	.syntax = "container PREFIX port N mac MAC | client MAC port N mac MAC | uplink via MAC from MAC | "
		  "vlan ID port N",
	.maps = fwd_maps,
	.parse = fwd_parse,
	.format = fwd_format,
	.commit = fwd_commit,
};

XNF_EXPORT_RULES(fwd, &fwd_codec);
