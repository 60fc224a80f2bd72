// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/settings_codec.h>
#include <xnf/rules_text.h>

#include <stdio.h>
#include <string.h>

#define MAX_WORDS 4

static const struct xnf_setting *find_by_name(const struct xnf_settings *s, const char *name)
{
	for (const struct xnf_setting *it = s->list; it->name; it++) {
		if (strcmp(it->name, name) == 0)
			return it;
	}
	return NULL;
}

static void list_names(const struct xnf_settings *s, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (const struct xnf_setting *it = s->list; it->name && used < len; it++)
		used += snprintf(out + used, len - used, "%s%s", it == s->list ? "" : ", ", it->name);
}

int xnf_settings_parse(const struct xnf_settings *s, const char *text, struct xnf_rule_entry *entry, char *err,
		       size_t errlen)
{
	char copy[XNF_RULE_MAX_TEXT], *word[MAX_WORDS], names[256], what[128];
	const struct xnf_setting *setting;
	__u32 value;
	int n;

	snprintf(copy, sizeof(copy), "%s", text);
	n = xnf_rules_split(copy, word, MAX_WORDS);
	setting = n >= 1 ? find_by_name(s, word[0]) : NULL;
	if (!setting) {
		list_names(s, names, sizeof(names));
		snprintf(err, errlen, "unknown setting '%s': use %s", n >= 1 ? word[0] : "", names);
		return -1;
	}
	if (n != 2) {
		snprintf(err, errlen, "'%s' takes one number", setting->name);
		return -1;
	}
	snprintf(what, sizeof(what), "number from %ld to %ld for %s", setting->min, setting->max, setting->name);
	if (xnf_rules_parse_number(word[1], setting->min, setting->max, what, &value, err, errlen))
		return -1;
	entry->map = s->map;
	memcpy(entry->key, &setting->slot, sizeof(setting->slot));
	memcpy(entry->value, &value, sizeof(value));
	entry->reset_on_delete = true;
	return 0;
}

int xnf_settings_format(const struct xnf_settings *s, const char *map, const void *key, const void *value,
			char *out, size_t outlen)
{
	__u32 slot, number;

	if (strcmp(map, s->map) != 0)
		return -1;
	memcpy(&slot, key, sizeof(slot));
	memcpy(&number, value, sizeof(number));
	for (const struct xnf_setting *it = s->list; it->name; it++) {
		if (it->slot == slot) {
			snprintf(out, outlen, "%s %u", it->name, number);
			return 0;
		}
	}
	return -1;
}
