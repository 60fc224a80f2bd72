/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command-line options declared once, as a table: the same table parses the
 * command line (each value checked, one message naming the option when it is
 * wrong), prints --help and is written out by `describe` for the Python CLI,
 * which restates none of it. Every xnf binary declares its options this way.
 */
#ifndef XNF_RUNTIME_OPTIONS_H
#define XNF_RUNTIME_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <linux/types.h>

#define XNF_MAX_CORES 64

/* A macro's value as a string literal: XNF_STR(XNF_MAX_PORTS) is "8". */
#define XNF__STR(x) #x
#define XNF_STR(x) XNF__STR(x)

enum xnf_option_kind {
	XNF_OPT_FLAG,   /* bool; takes no value */
	XNF_OPT_UINT,   /* __u32 in [min, max] */
	XNF_OPT_U64,    /* __u64 in [min, max] */
	XNF_OPT_NUMBER, /* double in [min, max] */
	XNF_OPT_STRING, /* const char *, the argument itself */
	XNF_OPT_CHOICE, /* int: the index of the value in choices */
	XNF_OPT_CORES,  /* struct xnf_core_list: a comma-separated list of this machine's cores, each once */
	XNF_OPT_CUSTOM, /* the option's own parse function */
};

struct xnf_core_list {
	int cores[XNF_MAX_CORES];
	__u32 count;
};

struct xnf_option {
	const char *name;             /* --name */
	char short_name;              /* -c, or 0 */
	enum xnf_option_kind kind;
	const char *value;            /* what the value is called in --help ("N", "FILE") */
	const char *help;             /* one line or more; no trailing period needed */
	const char *section;          /* --help groups options by it; NULL: the first group */
	size_t offset;                /* where the value goes in the binary's options struct */
	double min, max;              /* XNF_OPT_UINT, XNF_OPT_NUMBER */
	const char *const *choices;   /* XNF_OPT_CHOICE: NULL-terminated */
	const char *default_text;     /* the default in words ("from the last core down"); NULL: read it from the
				       * defaults struct the caller gives (numbers, choices), or none */
	bool repeat;                  /* may be given more than once (XNF_OPT_CUSTOM collects) */
	/* XNF_OPT_CUSTOM: takes the text and the whole options struct; 0, or -1 after saying why. */
	int (*parse)(const struct xnf_option *option, const char *text, void *opts);
	int id;                       /* the binary's own tag (e.g. "AF_XDP modes only"); 0 by default */
};

#define XNF_OPTIONS_END { .name = NULL }

/*
 * Parses argv[first..] into opts. Returns 0; 1 after printing --help (to
 * stdout), 2 after --version; -1 after one error message on stderr. given[i] is set for every
 * table entry i that appeared (may be NULL). Positional arguments are refused.
 */
int xnf_options_parse(const struct xnf_option *table, int argc, char **argv, void *opts, bool *given,
		      const char *usage, const void *defaults);
/* defaults: the options struct as it starts (the defaults of numbers and choices are read from it), or NULL. */
void xnf_options_help(FILE *out, const struct xnf_option *table, const char *usage, const void *defaults);
/* The table as a JSON array: name, short, kind, value, help, section, min, max, choices, default, repeat. */
void xnf_options_describe(FILE *out, const struct xnf_option *table, const void *defaults);
size_t xnf_options_count(const struct xnf_option *table);
/* "PROGRAM VERSION" on stdout (the binary's own name, whichever subcommand asks): what --version prints (every binary's; the version is pyproject.toml's, given to
 * the build by the Makefile as XNF_VERSION). */
void xnf_print_version(void);

/* The one core-list parser: "0", "0,1". On error says what was wrong, naming option. */
int xnf_parse_cores(const char *option, const char *text, struct xnf_core_list *out);
/* One of this machine's cores (a tool's --core), or an error naming option. */
int xnf_parse_one_core(const char *option, const char *text, __u32 *core);
/* A whole number in [min, max], or an error naming option. */
int xnf_parse_uint(const char *option, const char *text, double min, double max, __u32 *out);

#endif
