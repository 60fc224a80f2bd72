// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/options.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>

#define MAX_OPTIONS 96
#define HELP_COLUMN 27
#define ID_BASE 1000

static const char *const kind_names[] = {
	[XNF_OPT_FLAG] = "flag", [XNF_OPT_UINT] = "uint", [XNF_OPT_U64] = "uint", [XNF_OPT_NUMBER] = "number", [XNF_OPT_STRING] = "string",
	[XNF_OPT_CHOICE] = "choice", [XNF_OPT_CORES] = "cores", [XNF_OPT_CUSTOM] = "string",
};

/* getopt's value for --version: past every table index (ID_BASE + i) and every short option. */
#define VERSION_ID (ID_BASE - 1)

void xnf_print_version(void)
{
	printf("%s %s\n", program_invocation_short_name, XNF_VERSION);
}

size_t xnf_options_count(const struct xnf_option *table)
{
	size_t n = 0;

	while (table[n].name)
		n++;
	return n;
}

int xnf_parse_uint(const char *option, const char *text, double min, double max, __u32 *out)
{
	char *end;
	double n;

	errno = 0;
	n = strtod(text, &end);
	if (!*text || *end || errno || n != floor(n) || n < min || n > max) {
		xnf_error("--%s takes a whole number from %.0f to %.0f, not '%s'", option, min, max, text);
		return -1;
	}
	*out = (__u32)n;
	return 0;
}

static int parse_number(const struct xnf_option *o, const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	if (!*text || *end || errno || *out < o->min || *out > o->max || isnan(*out)) {
		xnf_error("--%s takes a number from %g to %g, not '%s'", o->name, o->min, o->max, text);
		return -1;
	}
	return 0;
}

static int parse_u64(const struct xnf_option *o, const char *text, __u64 *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(text, &end, 10);
	if (!*text || *end || errno || text[0] == '-' || (double)n < o->min || (double)n > o->max) {
		xnf_error("--%s takes a whole number from %.0f to %.0f, not '%s'", o->name, o->min, o->max, text);
		return -1;
	}
	*out = n;
	return 0;
}

int xnf_parse_one_core(const char *option, const char *text, __u32 *core)
{
	struct xnf_core_list one;

	if (xnf_parse_cores(option, text, &one))
		return -1;
	if (one.count != 1) {
		xnf_error("--%s takes one core, not '%s'", option, text);
		return -1;
	}
	*core = (__u32)one.cores[0];
	return 0;
}

int xnf_parse_cores(const char *option, const char *text, struct xnf_core_list *out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char copy[256], *next;

	out->count = 0;
	if (!*text || strlen(text) >= sizeof(copy)) {
		xnf_error("--%s takes a comma-separated list of cores, e.g. 0 or 0,1, not '%.40s%s'", option, text,
			  strlen(text) > 40 ? "..." : "");
		return -1;
	}
	snprintf(copy, sizeof(copy), "%s", text);
	/* Every item between commas counts: "0,", ",0" and "0,,1" are mistakes, not lists. */
	for (char *tok = copy; tok; tok = next) {
		char *end;
		long core;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		if (!*tok) {
			xnf_error("--%s '%s': an item between commas is empty", option, text);
			return -1;
		}
		core = strtol(tok, &end, 10);
		if (!isdigit((unsigned char)*tok) || *end || core < 0 || core >= ncpu) {
			xnf_error("--%s: '%s' is not one of this machine's cores (0-%ld)", option, tok, ncpu - 1);
			return -1;
		}
		if (out->count == XNF_MAX_CORES) {
			xnf_error("--%s lists more than %d cores", option, XNF_MAX_CORES);
			return -1;
		}
		for (__u32 i = 0; i < out->count; i++) {
			if (out->cores[i] == core) {
				xnf_error("--%s: core %ld is given twice: give each core once", option, core);
				return -1;
			}
		}
		out->cores[out->count++] = (int)core;
	}
	return 0;
}

static int parse_choice(const struct xnf_option *o, const char *text, int *out)
{
	for (int i = 0; o->choices[i]; i++) {
		if (strcmp(o->choices[i], text) == 0) {
			*out = i;
			return 0;
		}
	}
	fprintf(stderr, "xnf: error: --%s takes", o->name);
	for (int i = 0; o->choices[i]; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : o->choices[i + 1] ? "," : " or", o->choices[i]);
	fprintf(stderr, ", not '%s'\n", text);
	return -1;
}

/* Puts one option's value where the table says. */
static int take(const struct xnf_option *o, const char *text, void *opts)
{
	void *field = (char *)opts + o->offset;

	switch (o->kind) {
	case XNF_OPT_FLAG: *(bool *)field = true; return 0;
	case XNF_OPT_UINT: return xnf_parse_uint(o->name, text, o->min, o->max, field);
	case XNF_OPT_U64: return parse_u64(o, text, field);
	case XNF_OPT_NUMBER: return parse_number(o, text, field);
	case XNF_OPT_STRING: *(const char **)field = text; return 0;
	case XNF_OPT_CHOICE: return parse_choice(o, text, field);
	case XNF_OPT_CORES: return xnf_parse_cores(o->name, text, field);
	case XNF_OPT_CUSTOM: return o->parse(o, text, opts);
	}
	return -1;
}

static size_t build_getopt_table(const struct xnf_option *table, struct option *longopts, char *shortopts)
{
	size_t n = xnf_options_count(table), s = 0;

	shortopts[s++] = ':'; /* a missing value is reported, not taken for an unknown option */
	for (size_t i = 0; i < n; i++) {
		longopts[i] = (struct option){ table[i].name,
					       table[i].kind == XNF_OPT_FLAG ? no_argument : required_argument, NULL,
					       ID_BASE + (int)i };
		if (table[i].short_name) {
			shortopts[s++] = table[i].short_name;
			if (table[i].kind != XNF_OPT_FLAG)
				shortopts[s++] = ':';
		}
	}
	longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n + 1] = (struct option){ "version", no_argument, NULL, VERSION_ID };
	longopts[n + 2] = (struct option){ 0 };
	shortopts[s++] = 'h';
	shortopts[s] = 0;
	return n;
}

static int index_of_short(const struct xnf_option *table, int c)
{
	for (size_t i = 0; table[i].name; i++) {
		if (table[i].short_name == c)
			return (int)i;
	}
	return -1;
}

/* The table index of the long option named by the len bytes at name; -1 if none is. */
static int index_of_long(const struct xnf_option *table, const char *name, size_t len)
{
	for (size_t i = 0; table[i].name; i++) {
		if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0)
			return (int)i;
	}
	return -1;
}

/* How many words after a word of short options (-v, -idut1, -i dut1) are its value: 1 when its last letter takes
 * a value the word does not hold. */
static int short_value_words(const struct xnf_option *table, const char *word)
{
	for (const char *c = word + 1; *c; c++) {
		int i = index_of_short(table, *c);

		if (i < 0)
			return 0;   /* getopt says what is wrong with it */
		if (table[i].kind != XNF_OPT_FLAG)
			return c[1] ? 0 : 1;
	}
	return 0;
}

/* getopt_long takes any unambiguous start of a long option's name (--ifa for --iface); xnf takes names whole, so
 * that an option written in a file of options never stands for another unseen. */
static int check_whole_names(const struct xnf_option *table, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *word = argv[i];
		size_t len;
		int found;

		if (strcmp(word, "--") == 0)
			return 0;
		if (word[0] != '-' || word[1] == '\0')
			continue;
		if (word[1] != '-') {
			i += short_value_words(table, word);
			continue;
		}
		len = strcspn(word + 2, "=");
		found = index_of_long(table, word + 2, len);
		if (found >= 0) {
			i += table[found].kind != XNF_OPT_FLAG && !word[2 + len];   /* its value is the next word */
			continue;
		}
		for (size_t j = 0; len && table[j].name; j++) {
			if (strncmp(table[j].name, word + 2, len) == 0) {
				xnf_error("%.*s is not an option: write it whole (--%s)", (int)len + 2, word, table[j].name);
				return -1;
			}
		}
	}
	return 0;
}

int xnf_options_parse(const struct xnf_option *table, int argc, char **argv, void *opts, bool *given,
		      const char *usage, const void *defaults)
{
	struct option longopts[MAX_OPTIONS + 3];
	char shortopts[2 * MAX_OPTIONS + 3];
	size_t n = xnf_options_count(table);
	bool seen[MAX_OPTIONS] = { 0 };
	int c;

	if (n > MAX_OPTIONS || check_whole_names(table, argc, argv))
		return -1;
	build_getopt_table(table, longopts, shortopts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		int i = c >= ID_BASE ? c - ID_BASE : index_of_short(table, c);

		if (c == 'h' && i < 0) {
			xnf_options_help(stdout, table, usage, defaults);
			return 1;
		}
		if (c == VERSION_ID) {
			xnf_print_version();
			return 2;
		}
		if (c == ':') {
			xnf_error("option %s needs a value", argv[optind - 1]);
			return -1;
		}
		if (c == '?' || i < 0) {
			xnf_error("unknown option %s (see --help)", argv[optind - 1]);
			return -1;
		}
		if (seen[i] && !table[i].repeat) {
			xnf_error("--%s is given twice: give it once", table[i].name);
			return -1;
		}
		if (take(&table[i], optarg, opts))
			return -1;
		seen[i] = true;
		if (given)
			given[i] = true;
	}
	if (optind < argc) {
		xnf_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}

/* The option's default as text, from default_text or the defaults struct; false if it has none. */
static bool default_of(const struct xnf_option *o, const void *defaults, char *buf, size_t len)
{
	const void *field = defaults ? (const char *)defaults + o->offset : NULL;

	if (o->default_text) {
		snprintf(buf, len, "%s", o->default_text);
		return true;
	}
	if (!field)
		return false;
	switch (o->kind) {
	case XNF_OPT_UINT: snprintf(buf, len, "%u", *(const __u32 *)field); return true;
	case XNF_OPT_U64: snprintf(buf, len, "%llu", (unsigned long long)*(const __u64 *)field); return true;
	case XNF_OPT_NUMBER: snprintf(buf, len, "%g", *(const double *)field); return true;
	case XNF_OPT_CHOICE: snprintf(buf, len, "%s", o->choices[*(const int *)field]); return true;
	default: return false;
	}
}

/* "  -m, --mode MODE" and the help text at HELP_COLUMN, continuation lines indented alike. */
static void help_line(FILE *out, const struct xnf_option *o, const void *defaults)
{
	char dflt[128];
	char head[96];
	int len = snprintf(head, sizeof(head), "  %c%c%s--%s%s%s", o->short_name ? '-' : ' ',
			   o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
			   o->value ? " " : "", o->value ? o->value : "");

	fputs(head, out);
	if (len >= HELP_COLUMN - 1)
		fprintf(out, "\n%*s", HELP_COLUMN, "");
	else
		fprintf(out, "%*s", HELP_COLUMN - len, "");
	for (const char *p = o->help; *p; p++) {
		fputc(*p, out);
		if (*p == '\n')
			fprintf(out, "%*s", HELP_COLUMN, "");
	}
	if (default_of(o, defaults, dflt, sizeof(dflt)))
		fprintf(out, " (default %s)", dflt);
	fputc('\n', out);
}

void xnf_options_help(FILE *out, const struct xnf_option *table, const char *usage, const void *defaults)
{
	const char *section = NULL;

	if (usage)
		fprintf(out, "%s\n\n", usage);
	for (size_t i = 0; table[i].name; i++) {
		const struct xnf_option *o = &table[i];

		if (o->section && (!section || strcmp(section, o->section))) {
			fprintf(out, "\n%s:\n", o->section);
			section = o->section;
		}
		help_line(out, o, defaults);
	}
	fprintf(out, "  -h, --help%*sthis text\n", HELP_COLUMN - 12, "");
	fprintf(out, "      --version%*sxnf's version\n", HELP_COLUMN - 15, "");
}

void xnf_options_describe(FILE *out, const struct xnf_option *table, const void *defaults)
{
	char dflt[128];

	fputc('[', out);
	for (size_t i = 0; table[i].name; i++) {
		const struct xnf_option *o = &table[i];

		fprintf(out, "%s{\"name\": ", i ? ", " : "");
		xnf_json_string(out, o->name);
		fprintf(out, ", \"short\": ");
		if (o->short_name)
			fprintf(out, "\"%c\"", o->short_name);
		else
			fprintf(out, "null");
		fprintf(out, ", \"kind\": \"%s\", \"value\": ", kind_names[o->kind]);
		xnf_json_string(out, o->value ? o->value : "");
		fprintf(out, ", \"help\": ");
		xnf_json_string(out, o->help);
		fprintf(out, ", \"section\": ");
		xnf_json_string(out, o->section ? o->section : "");
		if (o->kind == XNF_OPT_UINT || o->kind == XNF_OPT_U64 || o->kind == XNF_OPT_NUMBER)
			fprintf(out, ", \"min\": %.17g, \"max\": %.17g", o->min, o->max);
		if (o->choices) {
			fprintf(out, ", \"choices\": [");
			for (int c = 0; o->choices[c]; c++) {
				fprintf(out, "%s", c ? ", " : "");
				xnf_json_string(out, o->choices[c]);
			}
			fputc(']', out);
		}
		fprintf(out, ", \"default\": ");
		if (default_of(o, defaults, dflt, sizeof(dflt)))
			xnf_json_string(out, dflt);
		else
			fprintf(out, "null");
		fprintf(out, ", \"repeat\": %s}", o->repeat ? "true" : "false");
	}
	fputc(']', out);
}
