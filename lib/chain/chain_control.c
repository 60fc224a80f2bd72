// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The control side of a chain: one rules codec, start step and housekeeping
 * step made of its members', and one list of counter names ("firewall.rule_drop"). A chain's rule line starts with the member it is
 * for ("firewall drop udp ...", "lb service tcp ..."), and is listed that way.
 * Linked only into chain binaries (not part of libxnf.a, whose no_rules.o and
 * friends give standalone NFs their defaults).
 */
#include <stdio.h>
#include <string.h>

#include <xnf/internal/chain.h>

#define MAX_CHAIN_MAPS 64

static const char *chain_maps[MAX_CHAIN_MAPS + 1];

static const struct xnf_rules_codec *member_rules(const struct xnf_chain_member *m)
{
	return m->rules ? *m->rules : NULL;
}

static void member_names(char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (const struct xnf_chain_member *m = xnf_chain_members; m->name && used < len; m++) {
		if (member_rules(m))
			used += snprintf(out + used, len - used, "%s%s", used ? ", " : "", m->name);
	}
}

static int chain_parse(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	size_t name_len = strcspn(text, " \t");
	char names[256], reason[512];

	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		const struct xnf_rules_codec *rules = member_rules(m);

		if (!rules || strlen(m->name) != name_len || strncmp(text, m->name, name_len) != 0)
			continue;
		if (rules->parse(text + name_len + strspn(text + name_len, " \t"), entry, reason, sizeof(reason)) == 0)
			return 0;
		snprintf(err, errlen, "%s: %s (%s %s)", m->name, reason, m->name, rules->syntax);
		return -1;
	}
	member_names(names, sizeof(names));
	snprintf(err, errlen, "start the line with the NF of the chain it is for: %s",
		 names[0] ? names : "(no member takes rules)");
	return -1;
}

static const struct xnf_chain_member *owner_of(const char *map)
{
	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		const struct xnf_rules_codec *rules = member_rules(m);

		for (const char *const *name = rules ? rules->maps : NULL; name && *name; name++) {
			if (strcmp(*name, map) == 0)
				return m;
		}
	}
	return NULL;
}

static int chain_format(const char *map, const void *key, const void *value, char *out, size_t outlen)
{
	const struct xnf_chain_member *m = owner_of(map);
	char line[XNF_RULE_MAX_TEXT];

	if (!m || member_rules(m)->format(map, key, value, line, sizeof(line)))
		return -1;
	snprintf(out, outlen, "%s %s", m->name, line);
	return 0;
}

/* Each member's own commit (rules.h), in chain order: a change of any member's rules puts every one in force. */
static int chain_commit(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	char reason[512];

	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		const struct xnf_rules_codec *rules = member_rules(m);

		if (rules && rules->commit && rules->commit(maps, reason, sizeof(reason))) {
			snprintf(err, errlen, "%s: %s", m->name, reason);
			return -1;
		}
	}
	return 0;
}

static const struct xnf_rules_codec chain_codec = {
	.syntax = "MEMBER RULE: a rule of one of the chain's NFs, after its name",
	.maps = chain_maps,
	.parse = chain_parse,
	.format = chain_format,
	.commit = chain_commit,
};

/* The members' rule maps in one list, members in chain order. */
__attribute__((constructor)) static void collect_chain_maps(void)
{
	size_t n = 0;

	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		const struct xnf_rules_codec *rules = member_rules(m);

		for (const char *const *name = rules ? rules->maps : NULL; name && *name && n < MAX_CHAIN_MAPS; name++)
			chain_maps[n++] = *name;
	}
}

/* The members' counters as the runtime reports them: "member.name", in chain order, the order their bases follow. */
const char *xnf_nf_counter_names[XNF_MAX_NF_COUNTERS + 1];
static char counter_name_text[XNF_MAX_NF_COUNTERS][XNF_RULE_MAX_TEXT / 4];
static __u32 chain_counters_declared;

__attribute__((constructor)) static void collect_counter_names(void)
{
	struct xnf_chain_counters members[XNF_CHAIN_MAX_MEMBERS + 1];

	xnf_chain_counter_list(members);
	for (const struct xnf_chain_counters *c = members; c->member; c++) {
		for (__u32 i = 0; i < c->count; i++, chain_counters_declared++) {
			__u32 n = chain_counters_declared;

			if (n >= XNF_MAX_NF_COUNTERS)
				continue;
			snprintf(counter_name_text[n], sizeof(counter_name_text[n]), "%s.%s", c->member, c->names[i]);
			xnf_nf_counter_names[n] = counter_name_text[n];
		}
	}
}

static int chain_start(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	char reason[512];

	if (chain_counters_declared > XNF_MAX_NF_COUNTERS) {
		snprintf(err, errlen, "its NFs have %u counters together, more than the %u one program holds: "
			 "chain fewer of them", chain_counters_declared, XNF_MAX_NF_COUNTERS);
		return -1;
	}

	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		if (m->start && *m->start && (*m->start)(maps, reason, sizeof(reason))) {
			snprintf(err, errlen, "%s: %s", m->name, reason);
			return -1;
		}
	}
	return 0;
}

static void chain_housekeeping(const struct xnf_rules_target *maps)
{
	for (const struct xnf_chain_member *m = xnf_chain_members; m->name; m++) {
		if (m->housekeeping && *m->housekeeping)
			(*m->housekeeping)(maps);
	}
}

const struct xnf_rules_codec *const xnf_nf_rules = &chain_codec;
const struct xnf_nf_option *const xnf_nf_options = NULL;
const xnf_nf_start_fn xnf_nf_start = chain_start;
const xnf_nf_housekeeping_fn xnf_nf_housekeeping = chain_housekeeping;
