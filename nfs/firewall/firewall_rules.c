// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the firewall, one per line:
 *   ACTION tcp|udp SRC_IP SRC_PORT DST_IP DST_PORT [vlan ID]
 *   ACTION icmp|icmpv6|<0-255> SRC_IP DST_IP [vlan ID]
 *   default ACTION
 * ACTION is drop or allow; addresses are IPv4 or IPv6 (both of one family). vlan ID: only frames whose outermost tag
 * is 802.1Q with that id (1-4094); for them a rule of their VLAN comes before the same rule without one.
 */
#include <arpa/inet.h> /* before the linux headers nf.h pulls in */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/parse.h>
#include <xnf/control.h>
#include "firewall.h"

#define MAX_TOKENS 10

static const char *const fw_rule_maps[] = { "fw_acl", "fw_config", NULL };

static int parse_action(const char *word, __u32 *action, char *err, size_t errlen)
{
	if (strcmp(word, "drop") == 0)
		*action = FW_DROP;
	else if (strcmp(word, "allow") == 0)
		*action = FW_ALLOW;
	else {
		snprintf(err, errlen, "unknown action '%s': use drop or allow", word);
		return -1;
	}
	return 0;
}

static int parse_addr(const char *word, struct xnf_5tuple *t, __be32 *addr, char *err, size_t errlen)
{
	__u8 family;

	if (inet_pton(AF_INET, word, addr) == 1)
		family = 4;
	else if (inet_pton(AF_INET6, word, addr) == 1)
		family = 6;
	else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", word);
		return -1;
	}
	if (t->family && t->family != family) {
		snprintf(err, errlen, "source and destination must both be IPv4 or both IPv6");
		return -1;
	}
	t->family = family;
	return 0;
}

/* One 802.1Q id, kept in the key's pad: a rule of a VLAN is another key than the same rule of none. */
static int parse_vlan(const char *word, struct xnf_5tuple *t, char *err, size_t errlen)
{
	__u16 ids[2];

	if (xnf_rules_parse_vlan(word, ids, err, errlen))
		return -1;
	if (ids[1]) {
		snprintf(err, errlen, "the firewall matches one 802.1Q tag: give vlan ID, not OUTER.INNER");
		return -1;
	}
	t->pad = ids[0];
	return 0;
}

static int parse_default(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	__u32 slot = FW_SETTING_DEFAULT_ACTION, action;

	if (ntok != 2) {
		snprintf(err, errlen, "'default' takes one action: default drop|allow");
		return -1;
	}
	if (parse_action(tok[1], &action, err, errlen))
		return -1;
	entry->map = "fw_config";
	memcpy(entry->key, &slot, sizeof(slot));
	memcpy(entry->value, &action, sizeof(action));
	entry->reset_on_delete = true;
	return 0;
}

static int fw_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	struct xnf_5tuple t = { 0 };
	bool has_ports;
	__u32 action;
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok < 0) {
		snprintf(err, errlen, "too many words");
		return -1;
	}
	if (ntok >= 1 && strcmp(tok[0], "default") == 0)
		return parse_default(tok, ntok, entry, err, errlen);
	if (ntok < 2) {
		snprintf(err, errlen, "incomplete rule");
		return -1;
	}
	if (parse_action(tok[0], &action, err, errlen) || xnf_rules_parse_ip_proto(tok[1], 0, &t.proto, err, errlen))
		return -1;
	has_ports = t.proto == IPPROTO_TCP || t.proto == IPPROTO_UDP;
	if (ntok >= 2 && strcmp(tok[ntok - 2], "vlan") == 0) {
		if (parse_vlan(tok[ntok - 1], &t, err, errlen))
			return -1;
		ntok -= 2;
	}
	if (ntok != (has_ports ? 6 : 4)) {
		snprintf(err, errlen, has_ports ? "%s takes SRC_IP SRC_PORT DST_IP DST_PORT"
						: "protocol %s has no ports: give SRC_IP DST_IP",
			 tok[1]);
		return -1;
	}
	if (parse_addr(tok[2], &t, t.saddr, err, errlen))
		return -1;
	if (has_ports && (xnf_rules_parse_l4_port(tok[3], 0, &t.sport, err, errlen) ||
			  xnf_rules_parse_l4_port(tok[5], 0, &t.dport, err, errlen)))
		return -1;
	if (parse_addr(tok[has_ports ? 4 : 3], &t, t.daddr, err, errlen))
		return -1;
	if ((t.proto == IPPROTO_ICMP && t.family == 6) || (t.proto == IPPROTO_ICMPV6 && t.family == 4)) {
		snprintf(err, errlen, "use icmp with IPv4 and icmpv6 with IPv6");
		return -1;
	}
	entry->map = "fw_acl";
	memcpy(entry->key, &t, sizeof(t));
	memcpy(entry->value, &action, sizeof(action));
	return 0;
}

static int fw_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	const char *action = *(const __u32 *)value == FW_DROP ? "drop" : "allow";
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], pbuf[8];
	const struct xnf_5tuple *t = key;
	int af, used;

	if (strcmp(map, "fw_config") == 0) {
		snprintf(out, outlen, "default %s", action);
		return 0;
	}
	af = t->family == 6 ? AF_INET6 : AF_INET;
	inet_ntop(af, t->saddr, src, sizeof(src));
	inet_ntop(af, t->daddr, dst, sizeof(dst));
	if (t->proto == IPPROTO_TCP || t->proto == IPPROTO_UDP)
		used = snprintf(out, outlen, "%s %s %s %u %s %u", action,
				xnf_rules_ip_proto_name(t->proto, pbuf, sizeof(pbuf)), src, ntohs(t->sport), dst,
				ntohs(t->dport));
	else
		used = snprintf(out, outlen, "%s %s %s %s", action, xnf_rules_ip_proto_name(t->proto, pbuf, sizeof(pbuf)),
				src, dst);
	if (t->pad && used > 0 && (size_t)used < outlen)
		snprintf(out + used, outlen - (size_t)used, " vlan %u", t->pad);
	return 0;
}

static const struct xnf_rules_codec fw_codec = {
	.syntax = "drop|allow tcp|udp SRC_IP SRC_PORT DST_IP DST_PORT [vlan ID] | "
		  "drop|allow icmp|icmpv6|PROTO SRC_IP DST_IP [vlan ID] | default drop|allow",
	.maps = fw_rule_maps,
	.parse = fw_parse,
	.format = fw_format,
};

XNF_EXPORT_RULES(firewall, &fw_codec);

static int fw_rule_drops(const void *value)
{
	return *(const __u32 *)value == FW_DROP;
}

/* Every fw_acl entry whose action is drop is a pure drop: nothing else happens to its packets. */
static const struct xnf_drop_rules fw_drop_rules = { .map = "fw_acl", .drops = fw_rule_drops };
XNF_EXPORT_DROP_RULES(firewall, &fw_drop_rules);
