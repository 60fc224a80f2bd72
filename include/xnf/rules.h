/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How an NF turns its rule lines into map entries and back. An NF with rules
 * ships nfs/<name>/<name>_rules.c defining `xnf_nf_rules`; the runtime uses it
 * for --rules files and for `xnf rules add|del|list`, on either data path.
 * Native only: rules are parsed in user space, never in the packet path.
 */
#ifndef XNF_RULES_H
#define XNF_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct xnf_rules_target;

#define XNF_RULE_MAX_KEY 64
#define XNF_RULE_MAX_VALUE 64
#define XNF_RULE_MAX_TEXT 512
/* A rules file's longest line, comments and blanks included. */
#define XNF_RULE_MAX_LINE (4 * XNF_RULE_MAX_TEXT)

/* One rule as a map entry. */
struct xnf_rule_entry {
	const char *map;       /* name of the map that holds it */
	__u8 key[XNF_RULE_MAX_KEY];
	__u8 value[XNF_RULE_MAX_VALUE];
	/* A setting kept in an array slot: deleting it writes a zero value instead. */
	bool reset_on_delete;
};

struct xnf_rules_codec {
	/* One-line summary of the syntax, shown with every parse error. */
	const char *syntax;
	/* Maps whose entries are the rules, in listing order; NULL-terminated. */
	const char *const *maps;
	/* Parses one rule (no comment, not blank). 0, or -1 with a reason in err. */
	int (*parse)(const char *text, struct xnf_rule_entry *entry, char *err, size_t errlen);
	/* Formats one map entry as a rule line. 0, or -1 to leave it out of a listing. */
	int (*format)(const char *map, const void *key, const void *value, char *out, size_t outlen);
	/*
	 * Optional: runs after every change of the rules (a --rules file, `xnf rules add|del`), once for the whole
	 * change, for an NF whose data path reads something built from its rules rather than the rule entries
	 * themselves (the acl's classifier). 0, or -1 with a reason in err: the change is then undone.
	 */
	int (*commit)(const struct xnf_rules_target *maps, char *err, size_t errlen);
};

/* The linked NF's codec, or NULL when the NF takes no rules (weak default). */
extern const struct xnf_rules_codec *const xnf_nf_rules;

#endif /* XNF_RULES_H */
