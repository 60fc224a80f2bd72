// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the load balancer, one per line:
 *   service tcp|udp VIP PORT
 *   backend tcp|udp VIP PORT slot N ADDR PORT mac MAC port P [drain]
 *   timeout SECONDS
 * A backend belongs to the service (VIP, PORT, protocol) in one of its slots
 * 0-31 and is reached by port P towards MAC. "drain" keeps its sessions and
 * gives it no new ones; adding the line again without "drain" makes it active.
 * Addresses of a service and its backends are of one family (IPv4 or IPv6).
 */
#include <arpa/inet.h> /* before the linux headers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include "lb.h"

#define MAX_TOKENS 14

static const char *const lb_maps[] = { "lb_services", "lb_backends", "lb_config", NULL };

/* An address of the given family (0: either); the family found goes to *family. */
static int parse_addr(const char *word, __u8 *family, __be32 addr[4], char *err, size_t errlen)
{
	__u8 found;

	memset(addr, 0, 16);
	if (inet_pton(AF_INET, word, addr) == 1)
		found = 4;
	else if (inet_pton(AF_INET6, word, addr) == 1)
		found = 6;
	else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", word);
		return -1;
	}
	if (*family && *family != found) {
		snprintf(err, errlen, "%s is IPv%u but the service is IPv%u: a service and its backends share a family",
			 word, found, *family);
		return -1;
	}
	*family = found;
	return 0;
}

static int parse_service(char **tok, struct lb_service_key *key, char *err, size_t errlen)
{
	memset(key, 0, sizeof(*key));
	return xnf_rules_parse_tcp_udp(tok[0], &key->proto, err, errlen) ||
	       parse_addr(tok[1], &key->family, key->addr, err, errlen) ||
	       xnf_rules_parse_l4_port(tok[2], 1, &key->port, err, errlen)
		       ? -1 : 0;
}

static int parse_backend(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct lb_backend_key key;
	struct lb_backend backend = { .state = LB_ACTIVE };
	__u32 slot, egress;

	if ((ntok != 12 && ntok != 13) || strcmp(tok[4], "slot") || strcmp(tok[8], "mac") || strcmp(tok[10], "port") ||
	    (ntok == 13 && strcmp(tok[12], "drain"))) {
		snprintf(err, errlen, "a backend reads: backend tcp|udp VIP PORT slot N ADDR PORT mac MAC port P [drain]");
		return -1;
	}
	if (parse_service(tok + 1, &key.service, err, errlen) ||
	    xnf_rules_parse_number(tok[5], 0, LB_SLOTS_PER_SERVICE - 1, "slot (0-31)", &slot, err, errlen) ||
	    parse_addr(tok[6], &key.service.family, backend.addr, err, errlen) ||
	    xnf_rules_parse_l4_port(tok[7], 1, &backend.port, err, errlen) ||
	    xnf_rules_parse_mac(tok[9], backend.mac, err, errlen) ||
	    xnf_rules_parse_number(tok[11], 0, XNF_MAX_PORTS - 1, "port index (0-7)", &egress, err, errlen))
		return -1;
	key.slot = slot;
	backend.egress = (__u8)egress;
	if (ntok == 13)
		backend.state = LB_DRAINING;
	entry->map = "lb_backends";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &backend, sizeof(backend));
	return 0;
}

static int lb_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok >= 1 && strcmp(tok[0], "service") == 0) {
		struct lb_service_key key;
		struct lb_service present = { .present = 1 };

		if (ntok != 4) {
			snprintf(err, errlen, "a service reads: service tcp|udp VIP PORT");
			return -1;
		}
		if (parse_service(tok + 1, &key, err, errlen))
			return -1;
		entry->map = "lb_services";
		memcpy(entry->key, &key, sizeof(key));
		memcpy(entry->value, &present, sizeof(present));
		return 0;
	}
	if (ntok >= 1 && strcmp(tok[0], "backend") == 0)
		return parse_backend(tok, ntok, entry, err, errlen);
	if (ntok >= 1 && strcmp(tok[0], "timeout") == 0) {
		__u32 slot = LB_SETTING_TIMEOUT_S, seconds;

		if (ntok != 2 || xnf_rules_parse_number(tok[1], 1, 86400, "timeout in seconds (1-86400)", &seconds, err,
							errlen)) {
			if (ntok != 2)
				snprintf(err, errlen, "the timeout reads: timeout SECONDS");
			return -1;
		}
		entry->map = "lb_config";
		memcpy(entry->key, &slot, sizeof(slot));
		memcpy(entry->value, &seconds, sizeof(seconds));
		entry->reset_on_delete = true;
		return 0;
	}
	snprintf(err, errlen, "unknown line: start it with service, backend or timeout");
	return -1;
}

static void format_service(const struct lb_service_key *key, char *out, size_t outlen)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(key->family == 6 ? AF_INET6 : AF_INET, key->addr, addr, sizeof(addr));
	snprintf(out, outlen, "%s %s %u", key->proto == IPPROTO_TCP ? "tcp" : "udp", addr, ntohs(key->port));
}

static int lb_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	char service[96], addr[INET6_ADDRSTRLEN], mac[24];

	if (strcmp(map, "lb_config") == 0) {
		__u32 seconds;

		memcpy(&seconds, value, sizeof(seconds));
		if (!seconds)
			return -1;
		snprintf(out, outlen, "timeout %u", seconds);
		return 0;
	}
	if (strcmp(map, "lb_services") == 0) {
		format_service(key, service, sizeof(service));
		snprintf(out, outlen, "service %s", service);
		return 0;
	}
	const struct lb_backend_key *k = key;
	const struct lb_backend *b = value;

	format_service(&k->service, service, sizeof(service));
	inet_ntop(k->service.family == 6 ? AF_INET6 : AF_INET, b->addr, addr, sizeof(addr));
	xnf_rules_format_mac(b->mac, mac, sizeof(mac));
	snprintf(out, outlen, "backend %s slot %u %s %u mac %s port %u%s", service, k->slot, addr, ntohs(b->port), mac,
		 b->egress, b->state == LB_DRAINING ? " drain" : "");
	return 0;
}

static const struct xnf_rules_codec lb_codec = {
	.syntax = "service tcp|udp VIP PORT | backend tcp|udp VIP PORT slot N ADDR PORT mac MAC port P [drain] | "
		  "timeout SECONDS",
	.maps = lb_maps,
	.parse = lb_parse,
	.format = lb_format,
};

XNF_EXPORT_RULES(lb, &lb_codec);
