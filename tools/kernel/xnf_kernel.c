// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-kernel: what this kernel gives xnf, from the facility table (lib/util/kernel_facilities.c): each facility
 * xnf uses, whether this kernel gives it, the upstream version that has it, what xnf does without it. `xnf doctor`
 * prints it; scripts ask one facility with --has.
 *
 *   xnf-kernel [--json] [--probe] [--has NAME]
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>

struct options {
	bool json;
	bool probe;
	const char *has;
};

static const struct xnf_option table[] = {
	{ .name = "json", .kind = XNF_OPT_FLAG, .offset = offsetof(struct options, json),
	  .help = "the table as one JSON object" },
	{ .name = "probe", .kind = XNF_OPT_FLAG, .offset = offsetof(struct options, probe),
	  .help = "probe the kernel again now instead of reading this boot's answers" },
	{ .name = "has", .kind = XNF_OPT_STRING, .value = "NAME", .offset = offsetof(struct options, has),
	  .help = "exit 0 if this kernel gives facility NAME, 1 if it refuses it (and say why)" },
	XNF_OPTIONS_END,
};

static int ask_one(const char *name)
{
	char text[512];

	for (int f = 0; f < XNF_NFACILITIES; f++) {
		if (strcmp(xnf_facility((enum xnf_facility)f)->name, name))
			continue;
		if (xnf_kernel_has((enum xnf_facility)f))
			return 0;
		printf("%s\n", xnf_kernel_refusal((enum xnf_facility)f, text, sizeof(text)));
		return 1;
	}
	xnf_error("--has %s: no kernel facility of xnf is called so (xnf-kernel lists them)", name);
	return 2;
}

int main(int argc, char **argv)
{
	struct options opt = { 0 };
	int rc = xnf_options_parse(table, argc, argv, &opt, NULL, "usage: xnf-kernel [--json] [--probe] [--has NAME]",
				   NULL);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (opt.probe)
		xnf_kernel_probe_again();
	if (opt.has)
		return ask_one(opt.has);
	if (opt.json) {
		xnf_kernel_table_json(stdout);
		putchar('\n');
	} else
		xnf_kernel_table_print(stdout);
	return 0;
}
