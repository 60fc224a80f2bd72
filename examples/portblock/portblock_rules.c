// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * portblock's rules, one per line: `block tcp|udp PORT`. They are map entries of portblock_ports;
 * `xnf rules add|del|list` and --rules files go through this codec on either data path.
 */
#include <arpa/inet.h> /* before the linux headers <xnf/control.h> pulls in */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <xnf/control.h>
#include "portblock.h"

static const char *const portblock_rule_maps[] = { "portblock_ports", NULL };

static int portblock_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *words[4];
	struct portblock_key key = { 0 };
	__u32 blocked = 1;
	int n;

	snprintf(copy, sizeof(copy), "%s", text);
	n = xnf_rules_split(copy, words, 4);
	if (n != 3 || strcmp(words[0], "block") != 0) {
		snprintf(err, errlen, "a rule is three words: block tcp|udp PORT");
		return -1;
	}
	if (xnf_rules_parse_tcp_udp(words[1], &key.proto, err, errlen) ||
	    xnf_rules_parse_l4_port(words[2], 0, &key.port, err, errlen))
		return -1;
	entry->map = "portblock_ports";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &blocked, sizeof(blocked));
	return 0;
}

static int portblock_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	const struct portblock_key *k = key;

	snprintf(out, outlen, "block %s %u", k->proto == IPPROTO_TCP ? "tcp" : "udp", ntohs(k->port));
	return 0;
}

static const struct xnf_rules_codec portblock_codec = {
	.syntax = "block tcp|udp PORT",
	.maps = portblock_rule_maps,
	.parse = portblock_parse,
	.format = portblock_format,
};

XNF_EXPORT_RULES(portblock, &portblock_codec);
