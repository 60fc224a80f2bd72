// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/rules_generations.h>

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

#define MAX_LINE XNF_RULE_MAX_LINE

enum { LINE_OK = 0, LINE_END = -1, LINE_TOO_LONG = -2, LINE_NUL = -3, LINE_READ_ERROR = -4 };

/*
 * One line into buf (without its newline), bounded: a file with no newline (/dev/zero) is refused at
 * MAX_LINE instead of filling memory, a NUL byte is refused instead of cutting the rule short, and a read
 * error is told apart from the end of the file.
 */
static int read_line(FILE *f, char *buf)
{
	size_t len = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (c == '\0')
			return LINE_NUL;
		if (len == MAX_LINE)
			return LINE_TOO_LONG;
		buf[len++] = (char)c;
	}
	buf[len] = '\0';
	if (c == EOF && ferror(f))
		return LINE_READ_ERROR;
	return c == EOF && len == 0 ? LINE_END : LINE_OK;
}

static bool line_error(int rc, const char *path, int lineno, char *err, size_t errlen)
{
	if (rc == LINE_TOO_LONG)
		snprintf(err, errlen, "%s:%d: line longer than %d characters: is this a rules file?", path, lineno,
			 MAX_LINE);
	else if (rc == LINE_NUL)
		snprintf(err, errlen, "%s:%d: a NUL byte in the line: is this a rules file?", path, lineno);
	else if (rc == LINE_READ_ERROR)
		snprintf(err, errlen, "cannot read rules file %s: %s", path, strerror(errno));
	return rc < LINE_END;
}

struct xnf_rules_file {
	char *path;
	struct parsed_rule *rules;
	int count;
};

void xnf_rules_free_file(struct xnf_rules_file *file)
{
	if (!file)
		return;
	free(file->path);
	free(file->rules);
	free(file);
}

static bool add_rule(struct xnf_rules_file *file, size_t *cap, const char *text, int lineno, char *err,
		     size_t errlen)
{
	char reason[512];

	if ((size_t)file->count == *cap) {
		struct parsed_rule *grown;

		*cap = *cap ? *cap * 2 : 64;
		grown = realloc(file->rules, *cap * sizeof(*file->rules));
		if (!grown) {
			snprintf(err, errlen, "out of memory reading %s", file->path);
			return false;
		}
		file->rules = grown;
	}
	if (parse_one(text, &file->rules[file->count].entry, reason, sizeof(reason))) {
		snprintf(err, errlen, "%s:%d: %s", file->path, lineno, reason);
		return false;
	}
	file->rules[file->count++].line = lineno;
	return true;
}

struct xnf_rules_file *xnf_rules_read_file(const char *path, char *err, size_t errlen)
{
	struct xnf_rules_file *file;
	char *line;
	size_t cap = 0;
	int lineno = 0, rc;
	FILE *f;

	if (!have_codec(err, errlen))
		return NULL;
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read rules file %s: %s", path, strerror(errno));
		return NULL;
	}
	file = calloc(1, sizeof(*file));
	line = malloc(MAX_LINE + 1);
	if (!file || !line || !(file->path = strdup(path))) {
		snprintf(err, errlen, "out of memory reading %s", path);
		goto fail;
	}
	while ((rc = read_line(f, line)) == LINE_OK) {
		char *text = rule_text(line);

		lineno++;
		if (*text && !add_rule(file, &cap, text, lineno, err, errlen))
			goto fail;
	}
	if (line_error(rc, path, lineno + 1, err, errlen))
		goto fail;
	free(line);
	fclose(f);
	return file;
fail:
	free(line);
	fclose(f);
	xnf_rules_free_file(file);
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
	struct xnf_rules_file *file = xnf_rules_read_file(path, err, errlen);
	int count = file ? file->count : -1;

	xnf_rules_free_file(file);
	return count;
}

/* The codec's commit after a change (rules.h); 0 when it has none. */
static int commit(const struct xnf_rules_target *target, char *err, size_t errlen)
{
	char reason[512] = "";

	if (!xnf_nf_rules->commit || xnf_nf_rules->commit(target, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(err, errlen, "%s; the change was undone", reason[0] ? reason : "the rules could not be put in force");
	return -1;
}

/* The file's rule i written over what its key held, what it held kept in j to undo it. */
static int write_rule(struct journal_entry *j, const struct xnf_rules_file *file, int i,
		      const struct xnf_rules_target *target, char *err, size_t errlen)
{
	int rc;

	j->entry = &file->rules[i].entry;
	if (resolve(target, j->entry, &j->ref, err, errlen))
		return -1;
	j->existed = xnf_map_ref_lookup(&j->ref, j->entry->key, j->old_value) == 0;
	rc = xnf_map_ref_update(&j->ref, j->entry->key, j->entry->value, BPF_ANY);
	if (rc) {
		snprintf(err, errlen, "%s:%d: cannot apply the rule: %s; no rule of the file was kept", file->path,
			 file->rules[i].line, map_error(rc));
		return -1;
	}
	return 0;
}

static int apply_file(const struct xnf_rules_target *target, void *arg, char *err, size_t errlen)
{
	const struct xnf_rules_file *file = arg;
	struct journal_entry *journal = calloc(file->count ? (size_t)file->count : 1, sizeof(*journal));
	int applied = 0;

	if (!journal) {
		snprintf(err, errlen, "out of memory loading %s", file->path);
		return -1;
	}
	for (; applied < file->count; applied++) {
		if (write_rule(&journal[applied], file, applied, target, err, errlen))
			goto fail;
	}
	if (commit(target, err, errlen)) {
		undo(journal, applied);
		commit(target, err, 0);   /* back in force as they were */
		free(journal);
		return -1;
	}
	free(journal);
	return file->count;
fail:
	undo(journal, applied);
	free(journal);
	return -1;
}

static bool same_key(const struct xnf_map_ref *ref, const struct xnf_rule_entry *a, const struct xnf_rule_entry *b)
{
	return strcmp(a->map, b->map) == 0 && memcmp(a->key, b->key, ref->key_size) == 0;
}

/* Entries in (map, key) order: a codec writes a key's bytes alone, the rest of the buffer zero (parse_one). */
static int entry_order(const void *a, const void *b)
{
	const struct xnf_rule_entry *x = *(const struct xnf_rule_entry *const *)a;
	const struct xnf_rule_entry *y = *(const struct xnf_rule_entry *const *)b;
	int by_map = strcmp(x->map, y->map);

	return by_map ? by_map : memcmp(x->key, y->key, sizeof(x->key));
}

/* The file's entries sorted, so that a reload finds whether it keeps a key in log time: searched one by one, 60,000
 * rules took 70 s to reload. NULL when out of memory. */
static const struct xnf_rule_entry **sorted_entries(const struct xnf_rules_file *file)
{
	const struct xnf_rule_entry **sorted = calloc(file->count ? (size_t)file->count : 1, sizeof(*sorted));

	if (!sorted)
		return NULL;
	for (int i = 0; i < file->count; i++)
		sorted[i] = &file->rules[i].entry;
	qsort(sorted, (size_t)file->count, sizeof(*sorted), entry_order);
	return sorted;
}

static bool next_has_key(const struct xnf_rule_entry **sorted, int count, const struct xnf_map_ref *ref,
			 const struct xnf_rule_entry *entry)
{
	const struct xnf_rule_entry *const *found = bsearch(&entry, sorted, (size_t)count, sizeof(*sorted),
							      entry_order);

	return found && same_key(ref, entry, *found);
}

int xnf_rules_apply_file(const struct xnf_rules_file *file, const struct xnf_rules_target *target, char *err,
			 size_t errlen)
{
	return xnf_rules_change_whole(target, apply_file, (void *)file, err, errlen);
}

struct replacement {
	const struct xnf_rules_file *in_force, *next;
	int removed;
};

static int replace_file(const struct xnf_rules_target *target, void *arg, char *err, size_t errlen)
{
	struct replacement *r = arg;
	const struct xnf_rules_file *in_force = r->in_force, *next = r->next;
	int *removed = &r->removed;
	int total = next->count + (in_force ? in_force->count : 0), done = 0;
	struct journal_entry *journal = calloc(total ? (size_t)total : 1, sizeof(*journal));
	const struct xnf_rule_entry **sorted = sorted_entries(next);

	*removed = 0;
	if (!journal || !sorted) {
		snprintf(err, errlen, "out of memory reloading %s", next->path);
		free(journal);
		free(sorted);
		return -1;
	}
	for (int i = 0; i < next->count; i++, done++) {
		if (write_rule(&journal[done], next, i, target, err, errlen))
			goto fail;
	}
	for (int i = 0; in_force && i < in_force->count; i++) {
		struct journal_entry *j = &journal[done];

		j->entry = &in_force->rules[i].entry;
		if (resolve(target, j->entry, &j->ref, err, errlen))
			goto fail;
		if (next_has_key(sorted, next->count, &j->ref, j->entry) ||
		    xnf_map_ref_lookup(&j->ref, j->entry->key, j->old_value) != 0)
			continue;   /* kept, or gone already (deleted through the control socket) */
		j->existed = true;
		if (xnf_map_ref_delete(&j->ref, j->entry->key) == 0) {
			done++;
			(*removed)++;
		}
	}
	free(sorted);
	sorted = NULL;
	if (commit(target, err, errlen)) {
		undo(journal, done);
		commit(target, err, 0);
		free(journal);
		return -1;
	}
	free(journal);
	return next->count;
fail:
	undo(journal, done);
	free(journal);
	free(sorted);
	return -1;
}

int xnf_rules_replace_file(const struct xnf_rules_file *in_force, const struct xnf_rules_file *next,
			   const struct xnf_rules_target *target, int *removed, char *err, size_t errlen)
{
	struct replacement r = { .in_force = in_force, .next = next };
	int count = xnf_rules_change_whole(target, replace_file, &r, err, errlen);

	*removed = count < 0 ? 0 : r.removed;
	return count;
}

int xnf_rules_load_file(const char *path, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	struct xnf_rules_file *file = xnf_rules_read_file(path, err, errlen);
	int count = file ? xnf_rules_apply_file(file, target, err, errlen) : -1;

	xnf_rules_free_file(file);
	return count;
}

int xnf_rules_add(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	__u8 old[XNF_RULE_MAX_VALUE];
	struct xnf_rule_entry entry;
	struct xnf_map_ref ref;
	bool existed;
	int rc;

	if (!have_codec(err, errlen) || parse_one(text, &entry, err, errlen) ||
	    resolve(target, &entry, &ref, err, errlen))
		return -1;
	existed = xnf_map_ref_lookup(&ref, entry.key, old) == 0;
	rc = xnf_map_ref_update(&ref, entry.key, entry.value, BPF_ANY);
	if (rc) {
		snprintf(err, errlen, "cannot add the rule: %s", map_error(rc));
		return -1;
	}
	if (commit(target, err, errlen)) {
		if (existed)
			xnf_map_ref_update(&ref, entry.key, old, BPF_ANY);
		else
			xnf_map_ref_delete(&ref, entry.key);
		commit(target, err, 0);
		return -1;
	}
	return 0;
}

/*
 * Whether the rule in force under the line's key is the line itself: a deletion names a whole rule, so a line
 * that shares only the key (another rule's TEID, another action for a sequence number) deletes nothing. The two
 * are compared as the codec writes them, which leaves out what the data path keeps beside a rule (a QER's
 * tokens, a PDR's counters); where the codec writes neither, their bytes are compared.
 */
static bool same_rule(const struct xnf_map_ref *ref, const struct xnf_rule_entry *entry, const __u8 *stored,
		      char *err, size_t errlen)
{
	char given[XNF_RULE_MAX_TEXT], in_force[XNF_RULE_MAX_TEXT];
	bool formatted = xnf_nf_rules->format(ref->name, entry->key, entry->value, given, sizeof(given)) == 0 &&
			 xnf_nf_rules->format(ref->name, entry->key, stored, in_force, sizeof(in_force)) == 0;

	/* Without the comment a listing adds (a PDR's counters). */
	if (formatted ? strcmp(rule_text(given), rule_text(in_force)) == 0 :
			memcmp(entry->value, stored, ref->value_size) == 0)
		return true;
	if (formatted)
		snprintf(err, errlen, "the rule in force under this key is '%s', not '%s': give its whole line to "
			 "delete it", rule_text(in_force), rule_text(given));
	else
		snprintf(err, errlen, "the rule in force under this key is not this line: list the rules and give its "
			 "whole line to delete it");
	return false;
}

int xnf_rules_del(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen)
{
	struct xnf_rule_entry entry;
	struct xnf_map_ref ref;
	__u8 zero[XNF_RULE_MAX_VALUE] = { 0 }, old[XNF_RULE_MAX_VALUE];
	int rc;

	if (!have_codec(err, errlen) || parse_one(text, &entry, err, errlen) ||
	    resolve(target, &entry, &ref, err, errlen))
		return -1;
	if (xnf_map_ref_lookup(&ref, entry.key, old))
		memset(old, 0, sizeof(old));
	else if (!same_rule(&ref, &entry, old, err, errlen))
		return -1;
	if (entry.reset_on_delete)
		rc = xnf_map_ref_update(&ref, entry.key, zero, BPF_ANY);
	else
		rc = xnf_map_ref_delete(&ref, entry.key);
	if (rc) {
		snprintf(err, errlen, "cannot delete the rule: %s", map_error(rc));
		return -1;
	}
	if (commit(target, err, errlen)) {
		xnf_map_ref_update(&ref, entry.key, old, BPF_ANY);
		commit(target, err, 0);
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
