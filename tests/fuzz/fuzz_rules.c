// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of one NF's rules codec: any text as a rule line, parsed as
 * `xnf rules add` and the --rules file parse it; a rule that parses must format
 * back to a line that parses to the same entry (what `xnf rules list` prints
 * must be loadable again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/control.h>

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct xnf_rule_entry entry, again;
	char text[XNF_RULE_MAX_TEXT], formatted[XNF_RULE_MAX_TEXT], reason[512];

	if (!xnf_nf_rules || size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (strlen(text) != size || strchr(text, '\n'))
		return 0; /* the rules engine never hands the codec a NUL or a newline */
	memset(&entry, 0, sizeof(entry));
	if (xnf_nf_rules->parse(text, &entry, reason, sizeof(reason)))
		return 0;
	if (xnf_nf_rules->format(entry.map, entry.key, entry.value, formatted, sizeof(formatted)))
		return 0; /* not every rule lists itself (settings that are also rules) */
	memset(&again, 0, sizeof(again));
	if (xnf_nf_rules->parse(formatted, &again, reason, sizeof(reason)) || strcmp(again.map, entry.map) ||
	    memcmp(again.key, entry.key, sizeof(entry.key)) || memcmp(again.value, entry.value, sizeof(entry.value))) {
		fprintf(stderr, "fuzz_rules: '%s' lists as '%s', which does not load back to the same rule (%s)\n", text,
			formatted, reason);
		abort();
	}
	return 0;
}
