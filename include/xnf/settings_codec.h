/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A rules codec for NFs whose rules are named numbers kept in an array map
 * (slot = setting), e.g. the synthetic NFs' "repeat 16" or "cycles 200".
 * The NF's codec functions call these with its table of settings.
 */
#ifndef XNF_SETTINGS_CODEC_H
#define XNF_SETTINGS_CODEC_H

#include <stddef.h>

#include <xnf/rules.h>

struct xnf_setting {
	const char *name;
	__u32 slot;
	long min, max;
};

struct xnf_settings {
	const char *map;                   /* array map of __u32 values */
	const struct xnf_setting *list;    /* ends with a NULL name */
};

int xnf_settings_parse(const struct xnf_settings *s, const char *text, struct xnf_rule_entry *entry, char *err,
		       size_t errlen);
/* Formats slots that are settings; -1 for other slots (values the NF keeps for itself). */
int xnf_settings_format(const struct xnf_settings *s, const char *map, const void *key, const void *value,
			char *out, size_t outlen);

/*
 * Defines `static const struct xnf_rules_codec codec` for the settings in
 * list (struct xnf_setting[], NULL-terminated) kept in the array map_name.
 */
#define XNF_SETTINGS_CODEC(codec, map_name, list, syntax_text)                 \
	static const char *const codec##_maps[] = { map_name, NULL };            \
	static const struct xnf_settings codec##_settings = { map_name, list };  \
	static int codec##_parse(const char *text, struct xnf_rule_entry *entry, \
				 char *err, size_t errlen)                       \
	{                                                                        \
		return xnf_settings_parse(&codec##_settings, text, entry, err, errlen); \
	}                                                                        \
	static int codec##_format(const char *map, const void *key,              \
				  const void *value, char *out, size_t outlen)   \
	{                                                                        \
		return xnf_settings_format(&codec##_settings, map, key, value, out, outlen); \
	}                                                                        \
	static const struct xnf_rules_codec codec = {                            \
		.syntax = (syntax_text),                                         \
		.maps = codec##_maps,                                            \
		.parse = codec##_parse,                                          \
		.format = codec##_format,                                        \
	}

#endif
