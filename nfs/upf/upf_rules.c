// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the user plane function, one per line (nfs/upf/README.md):
 *   n3 port N gateway MAC address ADDR
 *   n3 address ADDR
 *   n6 port N gateway MAC
 *   pdr SEID ID uplink teid TEID [qfi QFI] far ID [qer ID]
 *   pdr SEID ID downlink ue ADDR far ID [qer ID]
 *   far SEID ID forward n6 | forward n3 teid TEID to ADDR [qfi QFI] | forward port N mac MAC | drop | buffer
 *   qer SEID ID mbr RATE [burst BYTES]
 *   breakout PREFIX port N mac MAC
 * A session's rules are named by its SEID and their ID within it, as PFCP names them (TS 29.244).
 */
#include <arpa/inet.h> /* before the linux headers */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/common.h>
#include <xnf/control.h>
#include "upf.h"

#define MAX_TOKENS 14
#define MAX_RATE_BITS 400000000000ull /* 400 Gbit/s */
#define DEFAULT_BURST_MS 100          /* a rate limit's bucket holds this much of its rate by default ... */
#define MIN_BURST_BYTES 3000          /* ... and never less than two full-size frames, */
#define MAX_BURST_BYTES (1L << 30)    /* nor more than 1 GiB */

static const char *const upf_maps[] = { "upf_ifaces", "upf_n3_addrs", "upf_breakout", "upf_uplink",
					"upf_downlink", "upf_fars", "upf_qers", NULL };
static const char *const iface_names[] = { [UPF_IF_N3] = "n3", [UPF_IF_N6] = "n6" };

static int parse_ipv4(const char *word, const char *what, __be32 *addr, char *err, size_t errlen)
{
	char reason[160];

	if (xnf_rules_parse_unicast_ipv4(word, what, addr, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(err, errlen, "%s (N3 runs over IPv4 here)", reason);
	return -1;
}

static int parse_rule_key(char **tok, struct upf_rule_key *key, char *err, size_t errlen)
{
	memset(key, 0, sizeof(*key));
	if (xnf_rules_parse_u64(tok[1], UINT64_MAX, "SEID (a whole number)", &key->seid, err, errlen))
		return -1;
	return xnf_rules_parse_number(tok[2], 1, 4294967295L, "rule ID (1-4294967295)", &key->id, err, errlen);
}

static int parse_teid(const char *word, __be32 *teid, char *err, size_t errlen)
{
	__u32 value;

	if (xnf_rules_parse_number(word, 1, 4294967295L, "TEID (1-4294967295; 0 is path management's)", &value, err,
				   errlen))
		return -1;
	*teid = htonl(value);
	return 0;
}

static int parse_qfi(const char *word, __u8 *qfi, char *err, size_t errlen)
{
	__u32 value;

	if (xnf_rules_parse_number(word, 1, 63, "QFI (1-63)", &value, err, errlen))
		return -1;
	*qfi = (__u8)value;
	return 0;
}

static int parse_interface(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	__u32 which = strcmp(tok[0], "n3") == 0 ? UPF_IF_N3 : UPF_IF_N6;
	struct upf_iface iface = { .set = 1 };

	if (which == UPF_IF_N3 && ntok == 3 && strcmp(tok[1], "address") == 0) {
		struct upf_n3_addr key = { 0 };
		__u32 one = 1;

		if (parse_ipv4(tok[2], "n3 address", &key.addr, err, errlen))
			return -1;
		entry->map = "upf_n3_addrs";
		memcpy(entry->key, &key, sizeof(key));
		memcpy(entry->value, &one, sizeof(one));
		return 0;
	}
	if (which == UPF_IF_N3 ? ntok != 7 || strcmp(tok[5], "address") : ntok != 5) {
		snprintf(err, errlen, which == UPF_IF_N3 ? "N3 reads: n3 port N gateway MAC address ADDR (or n3 address ADDR)"
							 : "N6 reads: n6 port N gateway MAC");
		return -1;
	}
	if (strcmp(tok[1], "port") || strcmp(tok[3], "gateway")) {
		snprintf(err, errlen, "%s reads: %s port N gateway MAC%s", tok[0], tok[0],
			 which == UPF_IF_N3 ? " address ADDR" : "");
		return -1;
	}
	if (xnf_rules_parse_number(tok[2], 0, XNF_MAX_PORTS - 1, "port index (0-7, in --iface order)", &iface.port, err,
				   errlen) ||
	    xnf_rules_parse_mac(tok[4], iface.gateway_mac, err, errlen) ||
	    (which == UPF_IF_N3 && parse_ipv4(tok[6], "n3 address", &iface.addr, err, errlen)))
		return -1;
	entry->map = "upf_ifaces";
	memcpy(entry->key, &which, sizeof(which));
	memcpy(entry->value, &iface, sizeof(iface));
	entry->reset_on_delete = true;
	return 0;
}

/* "ADDR" (IPv4) or "ADDR/64" / "ADDR" (IPv6: its /64 prefix, as a UE gets it). */
static int parse_ue(const char *word, struct upf_ue_key *key, char *err, size_t errlen)
{
	struct xnf_prefix prefix;
	char reason[160];

	memset(key, 0, sizeof(*key));
	if (!strchr(word, ':')) {
		if (xnf_rules_parse_unicast_ipv4(word, "UE", (__be32 *)key->addr, reason, sizeof(reason)) == 0) {
			key->family = 4;
			return 0;
		}
	} else if (xnf_rules_parse_prefix(word, false, &prefix, reason, sizeof(reason)) == 0) {
		if (strchr(word, '/') && prefix.len != 64)
			snprintf(reason, sizeof(reason), "UE '%.60s' is not an IPv6 /64 prefix", word);
		else if (xnf_rules_check_unicast_ipv6_64(prefix.bytes, "UE", word, err, errlen))
			return -1;
		else {
			key->family = 6;
			memcpy(key->addr, prefix.bytes, 8);
			return 0;
		}
	}
	snprintf(err, errlen, "%s: give a unicast IPv4 address or an IPv6 /64 prefix (ADDR/64)", reason);
	return -1;
}

/* "far ID [qer ID]" from tok[first] on. */
static int parse_pdr_refs(char **tok, int ntok, int first, struct upf_pdr *pdr, char *err, size_t errlen)
{
	if (ntok - first != 2 && ntok - first != 4)
		return -1;
	if (strcmp(tok[first], "far") ||
	    xnf_rules_parse_number(tok[first + 1], 1, 4294967295L, "FAR ID", &pdr->far_id, err, errlen))
		return -1;
	if (ntok - first == 4 &&
	    (strcmp(tok[first + 2], "qer") ||
	     xnf_rules_parse_number(tok[first + 3], 1, 4294967295L, "QER ID", &pdr->qer_id, err, errlen)))
		return -1;
	return 0;
}

static int parse_pdr(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	static const char syntax[] = "a PDR reads: pdr SEID ID uplink teid TEID [qfi QFI] far ID [qer ID], "
				     "or pdr SEID ID downlink ue ADDR far ID [qer ID]";
	struct upf_rule_key id;
	struct upf_pdr pdr = { 0 };
	int refs;

	err[0] = '\0';
	if (ntok < 8 || parse_rule_key(tok, &id, err, errlen))
		goto bad;
	pdr.seid = id.seid;
	pdr.pdr_id = id.id;
	if (strcmp(tok[3], "uplink") == 0 && strcmp(tok[4], "teid") == 0) {
		struct upf_teid_key key = { 0 };

		refs = 6;
		if (parse_teid(tok[5], &key.teid, err, errlen))
			goto bad;
		if (strcmp(tok[6], "qfi") == 0) {
			if (ntok < 10 || parse_qfi(tok[7], &key.qfi, err, errlen))
				goto bad;
			refs = 8;
		}
		if (parse_pdr_refs(tok, ntok, refs, &pdr, err, errlen))
			goto bad;
		entry->map = "upf_uplink";
		memcpy(entry->key, &key, sizeof(key));
	} else if (strcmp(tok[3], "downlink") == 0 && strcmp(tok[4], "ue") == 0) {
		struct upf_ue_key key;

		if (parse_ue(tok[5], &key, err, errlen) || parse_pdr_refs(tok, ntok, 6, &pdr, err, errlen))
			goto bad;
		entry->map = "upf_downlink";
		memcpy(entry->key, &key, sizeof(key));
	} else {
		goto bad;
	}
	memcpy(entry->value, &pdr, sizeof(pdr));
	return 0;
bad:
	if (!err[0])
		snprintf(err, errlen, "%s", syntax);
	return -1;
}

static int parse_far_forward(char **tok, int ntok, struct upf_far *far, char *err, size_t errlen)
{
	far->action = UPF_FAR_FORWARD;
	if (ntok == 5 && strcmp(tok[4], "n6") == 0) {
		far->interface = UPF_IF_N6;
		return 0;
	}
	if ((ntok == 9 || ntok == 11) && strcmp(tok[4], "n3") == 0 && strcmp(tok[5], "teid") == 0 &&
	    strcmp(tok[7], "to") == 0) {
		far->interface = UPF_IF_N3;
		far->encap = 1;
		if (parse_teid(tok[6], &far->teid, err, errlen) || parse_ipv4(tok[8], "the gNB's address", &far->peer, err,
									    errlen))
			return -1;
		if (ntok == 11 && (strcmp(tok[9], "qfi") || parse_qfi(tok[10], &far->qfi, err, errlen)))
			return -1;
		return 0;
	}
	if (ntok == 8 && strcmp(tok[4], "port") == 0 && strcmp(tok[6], "mac") == 0) {
		far->interface = UPF_NINTERFACES;
		return xnf_rules_parse_number(tok[5], 0, XNF_MAX_PORTS - 1, "port index (0-7, in --iface order)",
					      &far->port, err, errlen) ||
		       xnf_rules_parse_mac(tok[7], far->mac, err, errlen);
	}
	return -1;
}

static int parse_far(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct upf_rule_key key;
	struct upf_far far = { 0 };

	err[0] = '\0';
	if (ntok < 4 || parse_rule_key(tok, &key, err, errlen))
		goto bad;
	if (ntok == 4 && strcmp(tok[3], "drop") == 0)
		far.action = UPF_FAR_DROP;
	else if (ntok == 4 && strcmp(tok[3], "buffer") == 0)
		far.action = UPF_FAR_BUFFER;
	else if (strcmp(tok[3], "forward") || parse_far_forward(tok, ntok, &far, err, errlen))
		goto bad;
	entry->map = "upf_fars";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &far, sizeof(far));
	return 0;
bad:
	if (!err[0])
		snprintf(err, errlen, "a FAR reads: far SEID ID forward n6 | forward n3 teid TEID to ADDR [qfi QFI] | "
				      "forward port N mac MAC | drop | buffer");
	return -1;
}

/* "RATE" in bit/s, with k, M or G. */
static int parse_rate(const char *word, __u64 *bits, char *err, size_t errlen)
{
	double value, scale = 1;
	char *end;

	value = strtod(word, &end);
	if (*end == 'k' || *end == 'M' || *end == 'G') {
		scale = *end == 'k' ? 1e3 : *end == 'M' ? 1e6 : 1e9;
		end++;
	}
	if (end == word || *end || !(value * scale >= 1) || value * scale > (double)MAX_RATE_BITS) {
		snprintf(err, errlen, "rate '%s': give bits per second, 1 or more, for instance 50M (k, M, G), at most 400G",
			 word);
		return -1;
	}
	*bits = (__u64)(value * scale);
	return 0;
}

static int parse_qer(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct upf_rule_key key;
	struct upf_qer qer = { 0 };
	__u64 bits;

	err[0] = '\0';
	if ((ntok != 5 && ntok != 7) || parse_rule_key(tok, &key, err, errlen) || strcmp(tok[3], "mbr") ||
	    parse_rate(tok[4], &bits, err, errlen))
		goto bad;
	qer.rate_bits = bits;
	qer.burst_bytes = bits / 8 * DEFAULT_BURST_MS / 1000;
	if (qer.burst_bytes < MIN_BURST_BYTES)
		qer.burst_bytes = MIN_BURST_BYTES;
	if (qer.burst_bytes > MAX_BURST_BYTES)
		qer.burst_bytes = MAX_BURST_BYTES;
	if (ntok == 7) {
		__u32 burst;

		if (strcmp(tok[5], "burst") ||
		    xnf_rules_parse_number(tok[6], 64, MAX_BURST_BYTES, "burst in bytes (64 up to 1 GiB)", &burst, err, errlen))
			goto bad;
		qer.burst_bytes = burst;
	}
	qer.tokens = (__s64)qer.burst_bytes;
	entry->map = "upf_qers";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &qer, sizeof(qer));
	return 0;
bad:
	if (!err[0])
		snprintf(err, errlen, "a QER reads: qer SEID ID mbr RATE [burst BYTES]");
	return -1;
}

/* "breakout PREFIX port N mac MAC": an IPv4 prefix (ADDR/LEN, or ADDR for /32). */
static int parse_breakout(char **tok, int ntok, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	struct upf_breakout_key key = { 0 };
	struct upf_breakout local = { 0 };
	struct xnf_prefix prefix;
	char reason[160];

	if (ntok != 6 || strcmp(tok[2], "port") || strcmp(tok[4], "mac")) {
		snprintf(err, errlen, "a breakout reads: breakout PREFIX port N mac MAC");
		return -1;
	}
	/* Host bits are refused, not masked: 10.0.0.5/24 may mean 10.0.0.0/24 or a typo for /32. */
	if (xnf_rules_parse_prefix(tok[1], false, &prefix, reason, sizeof(reason))) {
		snprintf(err, errlen, "breakout: %s: give an IPv4 prefix (ADDR/LEN)", reason);
		return -1;
	}
	if (prefix.family != AF_INET) {
		snprintf(err, errlen, "breakout: %.60s is IPv6, and breakout is by IPv4 prefix here: give an IPv4 prefix "
			 "(ADDR/LEN)", tok[1]);
		return -1;
	}
	memcpy(&key.addr, prefix.bytes, 4);
	key.prefixlen = prefix.len;
	if (xnf_rules_parse_number(tok[3], 0, XNF_MAX_PORTS - 1, "port index (0-7, in --iface order)", &local.port, err,
				   errlen) ||
	    xnf_rules_parse_mac(tok[5], local.mac, err, errlen))
		return -1;
	entry->map = "upf_breakout";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &local, sizeof(local));
	return 0;
}

static int upf_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *tok[MAX_TOKENS];
	int ntok;

	snprintf(copy, sizeof(copy), "%s", text);
	/* A listed PDR carries its usage as a comment: the listing loads back as it is. */
	if (strchr(copy, '#'))
		*strchr(copy, '#') = '\0';
	ntok = xnf_rules_split(copy, tok, MAX_TOKENS);
	if (ntok < 1) {
		snprintf(err, errlen, "an empty rule");
		return -1;
	}
	if (strcmp(tok[0], "n3") == 0 || strcmp(tok[0], "n6") == 0)
		return parse_interface(tok, ntok, entry, err, errlen);
	if (strcmp(tok[0], "pdr") == 0)
		return parse_pdr(tok, ntok, entry, err, errlen);
	if (strcmp(tok[0], "far") == 0)
		return parse_far(tok, ntok, entry, err, errlen);
	if (strcmp(tok[0], "qer") == 0)
		return parse_qer(tok, ntok, entry, err, errlen);
	if (strcmp(tok[0], "breakout") == 0)
		return parse_breakout(tok, ntok, entry, err, errlen);
	snprintf(err, errlen, "unknown line: start it with n3, n6, pdr, far, qer or breakout");
	return -1;
}

static int format_iface(const void *key, const struct upf_iface *iface, char *out, size_t outlen)
{
	char mac[24], addr[INET_ADDRSTRLEN];
	__u32 which;

	memcpy(&which, key, sizeof(which));
	if (!iface->set || which >= UPF_NINTERFACES)
		return -1;
	xnf_rules_format_mac(iface->gateway_mac, mac, sizeof(mac));
	inet_ntop(AF_INET, &iface->addr, addr, sizeof(addr));
	snprintf(out, outlen, "%s port %u gateway %s%s%s", iface_names[which], iface->port, mac,
		 which == UPF_IF_N3 ? " address " : "", which == UPF_IF_N3 ? addr : "");
	return 0;
}

/* "far ID [qer ID]  # usage" after a PDR's match. */
static void format_pdr_tail(const struct upf_pdr *pdr, char *out, size_t outlen)
{
	size_t used = strlen(out);

	snprintf(out + used, outlen - used, " far %u", pdr->far_id);
	used = strlen(out);
	if (pdr->qer_id)
		snprintf(out + used, outlen - used, " qer %u", pdr->qer_id);
	used = strlen(out);
	snprintf(out + used, outlen - used, "  # %llu packets, %llu bytes", (unsigned long long)pdr->packets,
		 (unsigned long long)pdr->bytes);
}

static void format_far(const struct upf_rule_key *key, const struct upf_far *far, char *out, size_t outlen)
{
	char peer[INET_ADDRSTRLEN], mac[24];
	int n = snprintf(out, outlen, "far %llu %u ", (unsigned long long)key->seid, key->id);

	if (far->action != UPF_FAR_FORWARD) {
		snprintf(out + n, outlen - n, "%s", far->action == UPF_FAR_DROP ? "drop" : "buffer");
	} else if (far->encap) {
		inet_ntop(AF_INET, &far->peer, peer, sizeof(peer));
		n += snprintf(out + n, outlen - n, "forward n3 teid %u to %s", ntohl(far->teid), peer);
		if (far->qfi)
			snprintf(out + n, outlen - n, " qfi %u", far->qfi);
	} else if (far->interface == UPF_NINTERFACES) {
		xnf_rules_format_mac(far->mac, mac, sizeof(mac));
		snprintf(out + n, outlen - n, "forward port %u mac %s", far->port, mac);
	} else {
		snprintf(out + n, outlen - n, "forward %s", iface_names[far->interface]);
	}
}

static int upf_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	char addr[INET6_ADDRSTRLEN];

	if (strcmp(map, "upf_ifaces") == 0)
		return format_iface(key, value, out, outlen);
	if (strcmp(map, "upf_breakout") == 0) {
		const struct upf_breakout_key *k = key;
		const struct upf_breakout *local = value;
		char mac[24];

		inet_ntop(AF_INET, &k->addr, addr, sizeof(addr));
		xnf_rules_format_mac(local->mac, mac, sizeof(mac));
		snprintf(out, outlen, "breakout %s/%u port %u mac %s", addr, k->prefixlen, local->port, mac);
	} else if (strcmp(map, "upf_n3_addrs") == 0) {
		inet_ntop(AF_INET, &((const struct upf_n3_addr *)key)->addr, addr, sizeof(addr));
		snprintf(out, outlen, "n3 address %s", addr);
	} else if (strcmp(map, "upf_uplink") == 0) {
		const struct upf_teid_key *k = key;
		const struct upf_pdr *pdr = value;
		int n = snprintf(out, outlen, "pdr %llu %u uplink teid %u", (unsigned long long)pdr->seid, pdr->pdr_id,
				 ntohl(k->teid));

		if (k->qfi)
			snprintf(out + n, outlen - n, " qfi %u", k->qfi);
		format_pdr_tail(pdr, out, outlen);
	} else if (strcmp(map, "upf_downlink") == 0) {
		const struct upf_ue_key *k = key;
		const struct upf_pdr *pdr = value;
		__u8 full[16] = { 0 };

		memcpy(full, k->addr, k->family == 4 ? 4 : 8);
		inet_ntop(k->family == 4 ? AF_INET : AF_INET6, full, addr, sizeof(addr));
		snprintf(out, outlen, "pdr %llu %u downlink ue %s%s", (unsigned long long)pdr->seid, pdr->pdr_id, addr,
			 k->family == 4 ? "" : "/64");
		format_pdr_tail(pdr, out, outlen);
	} else if (strcmp(map, "upf_fars") == 0) {
		format_far(key, value, out, outlen);
	} else {
		const struct upf_rule_key *k = key;
		const struct upf_qer *q = value;

		snprintf(out, outlen, "qer %llu %u mbr %llu burst %llu", (unsigned long long)k->seid, k->id,
			 (unsigned long long)q->rate_bits, (unsigned long long)q->burst_bytes);
	}
	return 0;
}

static const struct xnf_rules_codec upf_codec = {
	.syntax = "n3 port N gateway MAC address ADDR | n3 address ADDR | n6 port N gateway MAC | "
		  "pdr SEID ID uplink teid TEID [qfi QFI] far ID [qer ID] | pdr SEID ID downlink ue ADDR far ID [qer ID] | "
		  "far SEID ID forward n6|n3 teid TEID to ADDR [qfi QFI]|port N mac MAC | far SEID ID drop|buffer | "
		  "qer SEID ID mbr RATE [burst BYTES] | breakout PREFIX port N mac MAC",
	.maps = upf_maps,
	.parse = upf_parse,
	.format = upf_format,
};

XNF_EXPORT_RULES(upf, &upf_codec);
