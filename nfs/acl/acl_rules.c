// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the acl, one per line:
 *   SEQ allow|drop [PROTO] [from PREFIX] [to PREFIX] [sport PORT[-PORT]] [dport PORT[-PORT]] [flags FLAGS]
 *       [state STATES] [vlan ID[.ID]]
 *   default allow|drop
 *   timeout NAME SECONDS
 *   conntrack liberal
 * SEQ (1 to 4,000,000,000) orders the rules: the lowest that matches decides. PROTO is tcp, udp, icmp, icmpv6 or a
 * number; PREFIX an IPv4 or IPv6 address with an optional /LEN, or any; ports need tcp or udp; FLAGS (tcp) a
 * comma-separated list of fin, syn, rst, psh, ack, urg, ece, cwr, each set or, after '!', clear: "syn,!ack" is a
 * connection's first segment. STATES the frame's state on its connection (<xnf/conntrack_control.h>), a
 * comma-separated list of new, established, related, invalid, untracked; a timeout line sets an idle time of the
 * connection table (netfilter's names: tcp_established, udp, ...), and conntrack liberal leaves the TCP windows of
 * the connections opened from then on unchecked (netfilter's nf_conntrack_tcp_be_liberal=1). vlan ID matches frames whose outermost tag is
 * 802.1Q with that id (as nftables' vlan id); vlan OUTER.INNER QinQ frames: an 802.1ad tag with id OUTER, then an
 * 802.1Q one with INNER. A rule without prefixes matches both families. `xnf rules del` takes the same line;
 * a rule added with the sequence number of another replaces it.
 */
#include <arpa/inet.h> /* before the linux headers nf.h pulls in */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xnf/control.h>
#include <xnf/conntrack_control.h>
#include <xnf/parse.h>
#include "acl.h"

#define MAX_WORDS 16
#define MAX_SEQ 4000000000ul

static const char *const acl_rule_maps[] = { "acl_rules", "acl_config", "acl_ct_timeouts", NULL };
static const char *const tcp_flag_names[8] = { "fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr" };

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -1;
}

static int parse_action(const char *word, __u8 *action, char *err, size_t errlen)
{
	if (strcmp(word, "drop") == 0)
		*action = ACL_DROP;
	else if (strcmp(word, "allow") == 0)
		*action = ACL_ALLOW;
	else {
		snprintf(err, errlen, "unknown action '%s': use allow or drop", word);
		return -1;
	}
	return 0;
}

/* PREFIX: ADDRESS[/LEN] (host bits zero) or any. The family is the rule's: both prefixes must agree. */
static int parse_prefix(const char *word, struct acl_rule *r, __be32 *addr, __u8 *len, char *err, size_t errlen)
{
	struct xnf_prefix prefix;
	__u8 family;

	if (strcmp(word, "any") == 0)
		return 0;
	if (xnf_rules_parse_prefix(word, false, &prefix, err, errlen))
		return -1;
	family = prefix.family == AF_INET6 ? 6 : 4;
	if (r->family && r->family != family)
		return fail(err, errlen, "the source and destination prefixes must be of one family");
	r->family = family;
	*len = (__u8)prefix.len;
	memcpy(addr, prefix.bytes, family == 4 ? 4 : 16);
	return 0;
}

static int parse_range(const char *word, __u16 *lo, __u16 *hi, char *err, size_t errlen)
{
	__u32 low, high;

	if (xnf_rules_parse_range(word, 0, 65535, "port", &low, &high, err, errlen))
		return -1;
	*lo = (__u16)low;
	*hi = (__u16)high;
	return 0;
}

/* One flag of FLAGS (the word is not copied, so no list is ever cut short); each flag is named once. */
static int parse_flag(const char *name, size_t len, struct acl_rule *r, char *err, size_t errlen)
{
	int clear = len && name[0] == '!', bit = -1;

	for (int i = 0; i < 8; i++) {
		if (len - clear == strlen(tcp_flag_names[i]) && !strncmp(name + clear, tcp_flag_names[i], len - clear))
			bit = i;
	}
	if (bit < 0) {
		snprintf(err, errlen, "unknown TCP flag '%.*s': fin, syn, rst, psh, ack, urg, ece, cwr, each with '!' "
			 "for clear", (int)(len > 40 ? 40 : len), name);
		return -1;
	}
	if (r->flags_mask & (1u << bit)) {
		snprintf(err, errlen, "the TCP flag %s is named twice: name each flag once, set or '!' clear",
			 tcp_flag_names[bit]);
		return -1;
	}
	r->flags_mask |= (__u8)(1u << bit);
	if (!clear)
		r->flags |= (__u8)(1u << bit);
	return 0;
}

static int parse_flags(const char *word, struct acl_rule *r, char *err, size_t errlen)
{
	for (const char *name = word;; ) {
		const char *comma = strchr(name, ',');
		size_t len = comma ? (size_t)(comma - name) : strlen(name);

		if (parse_flag(name, len, r, err, errlen))
			return -1;
		if (!comma)
			return 0;
		name = comma + 1;
	}
}

/* A rule's keywords, each taking one value and given at most once. */
static const char *const keywords[] = { "from", "to", "sport", "dport", "flags", "state", "vlan" };
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

static int keyword_index(const char *word)
{
	for (size_t k = 0; k < NKEYWORDS; k++) {
		if (strcmp(word, keywords[k]) == 0)
			return (int)k;
	}
	return -1;
}

static int parse_value(int keyword, const char *value, struct acl_rule *r, char *err, size_t errlen)
{
	switch (keyword) {
	case 0: return parse_prefix(value, r, r->src, &r->src_len, err, errlen);
	case 1: return parse_prefix(value, r, r->dst, &r->dst_len, err, errlen);
	case 2: return parse_range(value, &r->sport_lo, &r->sport_hi, err, errlen);
	case 3: return parse_range(value, &r->dport_lo, &r->dport_hi, err, errlen);
	case 4: return parse_flags(value, r, err, errlen);
	case 5: return xnf_ct_parse_states(value, &r->ct_states, err, errlen);
	default: return xnf_rules_parse_vlan(value, r->vlan, err, errlen);
	}
}

/* The words after the action: [PROTO] then keyword-value pairs in any order, each keyword once: a second value
 * would not widen or narrow the first, and taking either silently is a guess. */
static int parse_match(char **w, int n, struct acl_rule *r, char *err, size_t errlen)
{
	unsigned given = 0;
	int i = 0;

	if (i < n && keyword_index(w[i]) < 0) {
		if (xnf_rules_parse_ip_proto(w[i], 1, &r->proto, err, errlen))
			return -1;
		i++;
	}
	r->sport_hi = r->dport_hi = 65535;
	for (; i < n; i += 2) {
		int keyword = keyword_index(w[i]);

		if (keyword < 0) {
			snprintf(err, errlen, "unknown word '%s': a protocol first, then from, to, sport, dport, flags, "
				 "state, vlan", w[i]);
			return -1;
		}
		if (given & (1u << keyword)) {
			snprintf(err, errlen, "'%s' is given twice: give it once (a range, prefix or list covers several)",
				 w[i]);
			return -1;
		}
		given |= 1u << keyword;
		if (i + 1 >= n) {
			snprintf(err, errlen, "'%s' needs a value", w[i]);
			return -1;
		}
		if (parse_value(keyword, w[i + 1], r, err, errlen))
			return -1;
	}
	return 0;
}

static int check_match(const struct acl_rule *r, char *err, size_t errlen)
{
	int ports = r->sport_lo || r->sport_hi != 65535 || r->dport_lo || r->dport_hi != 65535;

	if (ports && r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP)
		return fail(err, errlen, "ports need the protocol tcp or udp");
	if (r->flags_mask && r->proto != IPPROTO_TCP)
		return fail(err, errlen, "flags need the protocol tcp");
	if ((r->proto == IPPROTO_ICMP && r->family == 6) || (r->proto == IPPROTO_ICMPV6 && r->family == 4))
		return fail(err, errlen, "use icmp with IPv4 prefixes and icmpv6 with IPv6 ones");
	return 0;
}

static int parse_default(char **w, int n, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	__u32 slot = ACL_SETTING_DEFAULT, action;
	__u8 a;

	if (n != 2)
		return fail(err, errlen, "'default' takes one action: default allow|drop");
	if (parse_action(w[1], &a, err, errlen))
		return -1;
	action = a;
	entry->map = "acl_config";
	memcpy(entry->key, &slot, sizeof(slot));
	memcpy(entry->value, &action, sizeof(action));
	entry->reset_on_delete = true;
	return 0;
}

static int acl_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *w[MAX_WORDS];
	struct acl_rule r = { 0 };
	struct acl_rule_key key;
	__u32 seq;
	int n;

	snprintf(copy, sizeof(copy), "%s", text);
	n = xnf_rules_split(copy, w, MAX_WORDS);
	if (n < 0)
		return fail(err, errlen, "too many words");
	if (n >= 1 && strcmp(w[0], "default") == 0)
		return parse_default(w, n, entry, err, errlen);
	if (n >= 1 && strcmp(w[0], "timeout") == 0)
		return xnf_ct_parse_timeout("acl_ct_timeouts", w, n, entry, err, errlen);
	if (n >= 1 && strcmp(w[0], "conntrack") == 0)
		return xnf_ct_parse_setting("acl_ct_timeouts", w, n, entry, err, errlen);
	if (n < 2)
		return fail(err, errlen, "a rule is a sequence number, an action and what it matches");
	if (xnf_rules_parse_number(w[0], 1, (long)MAX_SEQ, "sequence number", &seq, err, errlen) ||
	    parse_action(w[1], &r.action, err, errlen) || parse_match(w + 2, n - 2, &r, err, errlen) ||
	    check_match(&r, err, errlen))
		return -1;
	key.seq = seq;
	entry->map = "acl_rules";
	memcpy(entry->key, &key, sizeof(key));
	memcpy(entry->value, &r, sizeof(r));
	return 0;
}

static void format_prefix(const struct acl_rule *r, const __be32 *addr, __u8 len, char *out, size_t outlen)
{
	char text[INET6_ADDRSTRLEN];

	inet_ntop(r->family == 6 ? AF_INET6 : AF_INET, addr, text, sizeof(text));
	snprintf(out, outlen, "%s/%u", text, len);
}

static size_t format_range(char *out, size_t outlen, const char *what, __u16 lo, __u16 hi)
{
	if (lo == 0 && hi == 65535)
		return 0;
	if (lo == hi)
		return (size_t)snprintf(out, outlen, " %s %u", what, lo);
	return (size_t)snprintf(out, outlen, " %s %u-%u", what, lo, hi);
}

static size_t format_flags(char *out, size_t outlen, const struct acl_rule *r)
{
	size_t used = 0;

	if (!r->flags_mask)
		return 0;
	used += (size_t)snprintf(out, outlen, " flags ");
	for (int i = 0, first = 1; i < 8 && used < outlen; i++) {
		if (!(r->flags_mask & (1u << i)))
			continue;
		used += (size_t)snprintf(out + used, outlen - used, "%s%s%s", first ? "" : ",",
					 r->flags & (1u << i) ? "" : "!", tcp_flag_names[i]);
		first = 0;
	}
	return used;
}

static int acl_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	const struct acl_rule *r = value;
	char prefix[INET6_ADDRSTRLEN + 8], proto[8];
	size_t used;

	if (strcmp(map, "acl_ct_timeouts") == 0)
		return xnf_ct_format_timeout(key, value, out, outlen);
	if (strcmp(map, "acl_config") == 0) {
		if (*(const __u32 *)key != ACL_SETTING_DEFAULT)
			return -1;   /* the generation in force and the tuple counts are the compiler's, not rules */
		snprintf(out, outlen, "default %s", *(const __u32 *)value == ACL_DROP ? "drop" : "allow");
		return 0;
	}
	used = (size_t)snprintf(out, outlen, "%u %s", ((const struct acl_rule_key *)key)->seq,
				r->action == ACL_DROP ? "drop" : "allow");
	if (r->proto)
		used += (size_t)snprintf(out + used, outlen - used, " %s",
					 xnf_rules_ip_proto_name(r->proto, proto, sizeof(proto)));
	if (r->family && (r->src_len || !r->dst_len)) {
		format_prefix(r, r->src, r->src_len, prefix, sizeof(prefix));
		used += (size_t)snprintf(out + used, outlen - used, " from %s", prefix);
	}
	if (r->family && r->dst_len) {
		format_prefix(r, r->dst, r->dst_len, prefix, sizeof(prefix));
		used += (size_t)snprintf(out + used, outlen - used, " to %s", prefix);
	}
	used += format_range(out + used, outlen - used, "sport", r->sport_lo, r->sport_hi);
	used += format_range(out + used, outlen - used, "dport", r->dport_lo, r->dport_hi);
	used += format_flags(out + used, outlen - used, r);
	if (r->ct_states && used < outlen) {
		char states[64];

		xnf_ct_format_states(r->ct_states, states, sizeof(states));
		used += (size_t)snprintf(out + used, outlen - used, " state %s", states);
	}
	if (r->vlan[0] && used < outlen) {
		char vlan[16];

		xnf_rules_format_vlan(r->vlan, vlan, sizeof(vlan));
		snprintf(out + used, outlen - used, " vlan %s", vlan);
	}
	return 0;
}

int acl_compile(const struct xnf_rules_target *maps, char *err, size_t errlen);

static const struct xnf_rules_codec acl_codec = {
	.syntax = "SEQ allow|drop [tcp|udp|icmp|icmpv6|PROTO] [from PREFIX] [to PREFIX] [sport P[-Q]] [dport P[-Q]] "
		  "[flags syn,!ack] [state new,established,related,invalid,untracked] [vlan ID[.ID]] | default allow|drop | "
		  "timeout tcp_established|udp|...|generic SECONDS | conntrack liberal",
	.maps = acl_rule_maps,
	.parse = acl_parse,
	.format = acl_format,
	.commit = acl_compile,
};

XNF_EXPORT_RULES(acl, &acl_codec);
