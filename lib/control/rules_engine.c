// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/rules_engine.h>

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct parsed_rule {
	struct xnf_rule_entry entry;
	int line;
};

struct journal_entry {
	struct xnf_map_ref ref;
	const struct xnf_rule_entry *entry;
	bool existed;
	__u8 old_value[XNF_RULE_MAX_VALUE];
};

static bool have_codec(char *err, size_t errlen)
{
	if (xnf_nf_rules)
		return true;
	snprintf(err, errlen, "this NF takes no rules");
	return false;
}

/* Strips the comment and surrounding blanks in place; returns the rule text. */
static char *rule_text(char *line)
{
	char *hash = strchr(line, '#');
	char *end;

	if (hash)
		*hash = '\0';
	while (isspace((unsigned char)*line))
		line++;
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return line;
}

static int parse_one(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen)
{
	char reason[256] = "";

	memset(entry, 0, sizeof(*entry));
	if (strlen(text) >= XNF_RULE_MAX_TEXT) {
		snprintf(err, errlen, "rule longer than %d characters", XNF_RULE_MAX_TEXT - 1);
		return -1;
	}
	if (xnf_nf_rules->parse(text, entry, reason, sizeof(reason))) {
		snprintf(err, errlen, "%s (syntax: %s)", reason[0] ? reason : "invalid rule",
			 xnf_nf_rules->syntax);
		return -1;
	}
	return 0;
}

static int resolve(const struct xnf_rules_target *t, const struct xnf_rule_entry *entry,
		   struct xnf_map_ref *ref, char *err, size_t errlen)
{
	if (t->resolve(t->ctx, entry->map, ref)) {
		snprintf(err, errlen, "the NF has no map '%s' (codec and NF disagree)", entry->map);
		return -1;
	}
	return 0;
}

static const char *map_error(int err)
{
	switch (err) {
	case -E2BIG:
	case -ENOSPC:
		return "the rule table is full";
	case -ENOENT:
		return "no such rule";
	default:
		return strerror(-err);
	}
}

/* Reads and parses the whole file; on error err says "path:line: reason". */
static struct parsed_rule *parse_file(const char *path, int *count, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct parsed_rule *rules = NULL;
	size_t cap = 0, len = 0;
	char *line = NULL, reason[512];
	size_t linecap = 0;
	int lineno = 0;

	if (!f) {
		snprintf(err, errlen, "cannot read rules file %s: %s", path, strerror(errno));
		return NULL;
	}
	while (getline(&line, &linecap, f) >= 0) {
		char *text = rule_text(line);

		lineno++;
		if (!*text)
			continue;
		if (len == cap) {
			struct parsed_rule *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(rules, cap * sizeof(*rules));
			if (!grown) {
				snprintf(err, errlen, "out of memory reading %s", path);
				goto fail;
			}
			rules = grown;
		}
		if (parse_one(text, &rules[len].entry, reason, sizeof(reason))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, reason);
			goto fail;
		}
		rules[len++].line = lineno;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read rules file %s: %s", path, strerror(errno));
		goto fail;
	}
	free(line);
	fclose(f);
	*count = (int)len;
	return rules ? rules : calloc(1, sizeof(*rules));
fail:
	free(line);
	free(rules);
	fclose(f);
	return NULL;
}

static void undo(struct journal_entry *journal, int applied)
{
	for (int i = applied - 1; i >= 0; i--) {
		struct journal_entry *j = &journal[i];

		if (j->existed)
			xnf_map_ref_update(&j->ref, j->entry->key, j->old_value, BPF_ANY);
		else
			xnf_map_ref_delete(&j->ref, j->entry->key);
	}
}

int xnf_rules_check_file(const char *path, char *err, size_t errlen)
{
	struct parsed_rule *rules;
	int count;

	if (!have_codec(err, errlen))
		return -1;
	rules = parse_file(path, &count, err, errlen);
	free(rules);
	return rules ? count : -1;
}

int xnf_rules_load_file(const char *path, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	struct journal_entry *journal;
	struct parsed_rule *rules;
	int count, applied = 0;

	if (!have_codec(err, errlen))
		return -1;
	rules = parse_file(path, &count, err, errlen);
	if (!rules)
		return -1;
	journal = calloc(count ? count : 1, sizeof(*journal));
	if (!journal) {
		free(rules);
		snprintf(err, errlen, "out of memory loading %s", path);
		return -1;
	}
	for (; applied < count; applied++) {
		struct journal_entry *j = &journal[applied];
		int rc;

		j->entry = &rules[applied].entry;
		if (resolve(target, j->entry, &j->ref, err, errlen))
			goto fail;
		j->existed = xnf_map_ref_lookup(&j->ref, j->entry->key, j->old_value) == 0;
		rc = xnf_map_ref_update(&j->ref, j->entry->key, j->entry->value, BPF_ANY);
		if (rc) {
			snprintf(err, errlen, "%s:%d: cannot apply the rule: %s; no rule of the file was kept",
				 path, rules[applied].line, map_error(rc));
			goto fail;
		}
	}
	free(journal);
	free(rules);
	return count;
fail:
	undo(journal, applied);
	free(journal);
	free(rules);
	return -1;
}

int xnf_rules_add(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	struct xnf_rule_entry entry;
	struct xnf_map_ref ref;
	int rc;

	if (!have_codec(err, errlen) || parse_one(text, &entry, err, errlen) ||
	    resolve(target, &entry, &ref, err, errlen))
		return -1;
	rc = xnf_map_ref_update(&ref, entry.key, entry.value, BPF_ANY);
	if (rc) {
		snprintf(err, errlen, "cannot add the rule: %s", map_error(rc));
		return -1;
	}
	return 0;
}

int xnf_rules_del(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	struct xnf_rule_entry entry;
	struct xnf_map_ref ref;
	__u8 zero[XNF_RULE_MAX_VALUE] = { 0 };
	int rc;

	if (!have_codec(err, errlen) || parse_one(text, &entry, err, errlen) ||
	    resolve(target, &entry, &ref, err, errlen))
		return -1;
	if (entry.reset_on_delete)
		rc = xnf_map_ref_update(&ref, entry.key, zero, BPF_ANY);
	else
		rc = xnf_map_ref_delete(&ref, entry.key);
	if (rc) {
		snprintf(err, errlen, "cannot delete the rule: %s", map_error(rc));
		return -1;
	}
	return 0;
}

static int list_map(FILE *out, const struct xnf_map_ref *ref, char *err, size_t errlen)
{
	__u8 key[XNF_RULE_MAX_KEY], next[XNF_RULE_MAX_KEY], value[XNF_RULE_MAX_VALUE];
	char text[XNF_RULE_MAX_TEXT];
	bool first = true;
	int count = 0;

	if (ref->key_size > sizeof(key) || ref->value_size > sizeof(value)) {
		snprintf(err, errlen, "map '%s' has entries larger than rules can be", ref->name);
		return -1;
	}
	while (xnf_map_ref_next_key(ref, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, ref->key_size);
		if (xnf_map_ref_lookup(ref, key, value))
			continue; /* deleted while we walked */
		if (xnf_nf_rules->format(ref->name, key, value, text, sizeof(text)) == 0) {
			fprintf(out, "%s\n", text);
			count++;
		}
	}
	return count;
}

int xnf_rules_list(FILE *out, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	int total = 0;

	if (!have_codec(err, errlen))
		return -1;
	for (const char *const *name = xnf_nf_rules->maps; *name; name++) {
		struct xnf_map_ref ref;
		int n;

		if (target->resolve(target->ctx, *name, &ref)) {
			snprintf(err, errlen, "the NF has no map '%s' (codec and NF disagree)", *name);
			return -1;
		}
		n = list_map(out, &ref, err, errlen);
		if (n < 0)
			return -1;
		total += n;
	}
	return total;
}
