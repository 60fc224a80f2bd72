// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main() of every NF binary (build/bin/xnf-<nf>): one binary per NF, with the
 * NF's BPF object embedded and its native function linked in, so one file
 * runs every mode.
 *
 *   xnf-<nf> run --mode MODE --iface IF [--iface IF2 ...] [--rules FILE] [--name NAME] [AF_XDP options]
 *   xnf-<nf> check-rules FILE
 *   xnf-<nf> describe
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/internal/native_maps.h>
#include <xnf/control.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/rules.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/rules_engine.h>

#include "instance.h"

#define EXIT_USAGE 2

enum {
	OPT_RUN_DIR = 1000,
	OPT_QUEUES, OPT_WORKERS, OPT_CORES, OPT_BATCH, OPT_RING, OPT_FRAME, OPT_FRAMES,
	OPT_ZEROCOPY, OPT_COPY_FALLBACK, OPT_NO_WAKEUP, OPT_BP_USEC, OPT_BP_BUDGET, OPT_TX_BUDGET,
	OPT_XMIT_BATCH, OPT_MAP_SIZE, OPT_TX_PATH, OPT_LIVE_BATCH, OPT_LIVE_WAIT,
	OPT_NF_BASE = 2000, /* the NF's own options: OPT_NF_BASE + index in xnf_nf_options */
};

#define MAX_NF_OPTIONS 8

static const struct option runtime_options[] = {
	{ "mode", required_argument, NULL, 'm' },
	{ "iface", required_argument, NULL, 'i' },
	{ "rules", required_argument, NULL, 'r' },
	{ "name", required_argument, NULL, 'n' },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "map-size", required_argument, NULL, OPT_MAP_SIZE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	/* AF_XDP modes only */
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "ring-size", required_argument, NULL, OPT_RING },
	{ "frame-size", required_argument, NULL, OPT_FRAME },
	{ "frames", required_argument, NULL, OPT_FRAMES },
	{ "zerocopy", no_argument, NULL, OPT_ZEROCOPY },
	{ "copy-fallback", no_argument, NULL, OPT_COPY_FALLBACK },
	{ "no-need-wakeup", no_argument, NULL, OPT_NO_WAKEUP },
	{ "busy-poll-usec", required_argument, NULL, OPT_BP_USEC },
	{ "busy-poll-budget", required_argument, NULL, OPT_BP_BUDGET },
	{ "tx-budget", required_argument, NULL, OPT_TX_BUDGET },
	{ "xmit-batch", required_argument, NULL, OPT_XMIT_BATCH },
	{ "tx-path", required_argument, NULL, OPT_TX_PATH },
	{ "live-batch", required_argument, NULL, OPT_LIVE_BATCH },
	{ "live-wait-us", required_argument, NULL, OPT_LIVE_WAIT },
	{ 0 },
};

static const struct xnf_afxdp_config afxdp_defaults = {
	.queues = 1, .workers = 1, .batch = 64, .ring_size = 2048, .frame_size = 4096,
	.need_wakeup = true, .busy_poll_usec = 20, .busy_poll_budget = 64,
	.tx_path = XNF_TX_AUTO, .live_batch = 1024, .live_wait_us = 50,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xnf-%s run --mode MODE --iface IF [--iface IF ...] [--rules FILE] [--name NAME]\n"
		"       xnf-%s check-rules FILE\n"
		"       xnf-%s describe\n"
		"\n"
		"  -m, --mode MODE        where the NF runs (see below)\n"
		"  -i, --iface IF         a port; give it again for more ports (at most %d), numbered in order\n"
		"  -r, --rules FILE       rules to load before traffic flows (loaded whole or not at all)\n"
		"  -n, --name NAME        instance name for 'xnf stats' and 'xnf rules' (default: the NF's)\n"
		"      --run-dir DIR      where control sockets live (default $XNF_RUN_DIR or %s)\n"
		"      --map-size MAP=N   give one of the NF's maps N entries (K, M, G: times 1024, 1024^2, 1024^3)\n"
		"  -v, --verbose          show libbpf's messages\n"
		"%s"
		"\nAF_XDP modes (afxdp*, xdp-sk*):\n"
		"      --queues N         serve queues 0..N-1 of every port (default 1)\n"
		"      --workers N        worker threads, each serving whole queues (default 1)\n"
		"      --cores LIST       pin worker i to the i-th core (default: from the last core down)\n"
		"      --batch N          packets per batch, at most the ring size (default 64)\n"
		"      --ring-size N      rx/tx/fill/completion ring size, a power of two (default 2048)\n"
		"      --frame-size N     UMEM frame size, 2048 or 4096 (default 4096)\n"
		"      --frames N         UMEM frames per worker (default: three ring sizes per socket)\n"
		"      --zerocopy         bind in zero-copy mode (fails where the driver lacks it)\n"
		"      --copy-fallback    with --zerocopy: use copy mode where zero-copy is missing\n"
		"      --no-need-wakeup   do not use the need_wakeup flag\n"
		"      --busy-poll-usec N, --busy-poll-budget N   for the -sysc modes (default 20, 64)\n"
		"      --tx-budget N      copy mode: descriptors one sendto() may send (Linux 6.17+; 32..ring)\n"
		"      --xmit-batch N     copy mode: skbs given to the driver at once (kernels that have it)\n"
		"      --tx-path PATH     how workers send: live (XDP's own transmit, one BPF_PROG_RUN call per batch),\n"
		"                         xsk (the socket's tx ring), auto (live on copy-mode sockets where the kernel\n"
		"                         runs it, else xsk; the default)\n"
		"      --live-batch N     live path: frames one call sends at most (default %u)\n"
		"      --live-wait-us N   live path: the longest a frame waits for its call while frames keep\n"
		"                         coming (default %u); a round that finds no packet sends at once\n",
		xnf_nf_name, xnf_nf_name, xnf_nf_name, XNF_MAX_PORTS, XNF_DEFAULT_RUN_DIR,
		xnf_nf_options ? "\nthis NF's own options (each stands for a rule line):\n" : "",
		afxdp_defaults.live_batch, afxdp_defaults.live_wait_us);
	for (size_t i = 0; xnf_nf_options && xnf_nf_options[i].name; i++)
		fprintf(out, "      %s\n", xnf_nf_options[i].help);
	fprintf(out, "\nmodes:\n");
	for (size_t i = 0; i < xnf_nmodes; i++)
		fprintf(out, "  %-12s %s%s\n", xnf_modes[i].name, xnf_modes[i].summary,
			xnf_modes[i].available ? "" : " (not yet available)");
}

static const struct mode_info *check_mode(const char *name)
{
	const struct mode_info *mode;

	if (!name) {
		xnf_error("no mode given: add --mode xdp (or see --help for all modes)");
		return NULL;
	}
	mode = xnf_find_mode(name);
	if (!mode) {
		fprintf(stderr, "xnf: error: unknown mode '%s': choose one of", name);
		for (size_t i = 0; i < xnf_nmodes; i++)
			fprintf(stderr, "%s %s", i ? "," : "", xnf_modes[i].name);
		fputc('\n', stderr);
		return NULL;
	}
	if (!mode->available) {
		xnf_error("mode '%s' is not available in this version of xnf", name);
		return NULL;
	}
	return mode;
}

/* A whole number in [min, max], or an error naming the option. */
static int parse_number(const char *option, const char *text, long min, long max, __u32 *out)
{
	char *end;
	long n = strtol(text, &end, 10);

	if (!*text || *end || n < min || n > max) {
		xnf_error("--%s takes a whole number from %ld to %ld, not '%s'", option, min, max, text);
		return -1;
	}
	*out = (__u32)n;
	return 0;
}

/* NAME=ENTRIES, with an optional binary K/M/G multiplier. */
static int parse_map_size(const char *text, struct run_options *opt)
{
	const char *eq = strchr(text, '=');
	unsigned long long n;
	char *end;

	if (opt->nmap_sizes == XNF_MAX_MAP_SIZES) {
		xnf_error("at most %d --map-size options", XNF_MAX_MAP_SIZES);
		return -1;
	}
	if (!eq || eq == text) {
		xnf_error("--map-size takes MAP=ENTRIES (e.g. fw_acl=1M), not '%s'", text);
		return -1;
	}
	n = strtoull(eq + 1, &end, 10);
	if (*end && !end[1] && strchr("KMG", *end)) {
		unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;

		n = n > (0xffffffffull >> shift) ? 0 : n << shift; /* too many: refused below, not wrapped */
	} else if (*end) {
		n = 0;
	}
	if (!eq[1] || n == 0 || n > 0xffffffffull) {
		xnf_error("--map-size %s: the entry count must be a whole number from 1 to 4G, with an optional "
			  "K, M or G", text);
		return -1;
	}
	opt->map_sizes[opt->nmap_sizes].name = strndup(text, eq - text);
	opt->map_sizes[opt->nmap_sizes++].entries = (__u32)n;
	return 0;
}

static int parse_cores(const char *text, struct xnf_afxdp_config *cfg)
{
	char copy[256], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", text);
	cfg->ncores = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u32 core;

		if (cfg->ncores == XNF_MAX_WORKERS || parse_number("cores", tok, 0, 4095, &core))
			return -1;
		cfg->cores[cfg->ncores++] = (int)core;
	}
	return 0;
}

static int parse_tx_path(const char *text, struct xnf_afxdp_config *cfg)
{
	if (xnf_tx_path_parse(text, &cfg->tx_path) == 0)
		return 0;
	xnf_error("--tx-path takes %s, %s or %s, not '%s'", xnf_tx_path_name(XNF_TX_LIVE),
		  xnf_tx_path_name(XNF_TX_XSK), xnf_tx_path_name(XNF_TX_AUTO), text);
	return -1;
}

static int parse_afxdp_option(int c, const char *arg, struct xnf_afxdp_config *cfg)
{
	switch (c) {
	case OPT_QUEUES: return parse_number("queues", arg, 1, 1 << 20, &cfg->queues);
	case OPT_WORKERS: return parse_number("workers", arg, 1, 1 << 20, &cfg->workers);
	case OPT_CORES: return parse_cores(arg, cfg);
	case OPT_BATCH: return parse_number("batch", arg, 1, 1 << 20, &cfg->batch);
	case OPT_RING: return parse_number("ring-size", arg, 1, 1 << 20, &cfg->ring_size);
	case OPT_FRAME: return parse_number("frame-size", arg, 1, 1 << 20, &cfg->frame_size);
	case OPT_FRAMES: return parse_number("frames", arg, 1, 1 << 24, &cfg->frames);
	case OPT_ZEROCOPY: cfg->zerocopy = true; return 0;
	case OPT_COPY_FALLBACK: cfg->copy_fallback = true; return 0;
	case OPT_NO_WAKEUP: cfg->need_wakeup = false; return 0;
	case OPT_BP_USEC: return parse_number("busy-poll-usec", arg, 0, 1000000, &cfg->busy_poll_usec);
	case OPT_BP_BUDGET: return parse_number("busy-poll-budget", arg, 1, 65535, &cfg->busy_poll_budget);
	case OPT_TX_BUDGET: return parse_number("tx-budget", arg, 1, 1 << 20, &cfg->tx_budget);
	case OPT_XMIT_BATCH: return parse_number("xmit-batch", arg, 1, 1 << 20, &cfg->xmit_batch);
	case OPT_TX_PATH: return parse_tx_path(arg, cfg);
	case OPT_LIVE_BATCH: return parse_number("live-batch", arg, 1, 1 << 20, &cfg->live_batch);
	case OPT_LIVE_WAIT: return parse_number("live-wait-us", arg, 0, 1000000, &cfg->live_wait_us);
	}
	return -1;
}

/* The NF's name where it is a valid instance name; "chain:firewall,lb" becomes "chain-firewall-lb". */
static const char *default_instance_name(void)
{
	static char name[XNF_MAX_NAME + 1];

	snprintf(name, sizeof(name), "%s", xnf_nf_name);
	for (char *c = name; *c; c++) {
		if (*c == ':' || *c == ',')
			*c = '-';
	}
	return name;
}

/* The runtime's options and the NF's own, in one table for getopt. */
static const struct option *all_options(void)
{
	static struct option table[sizeof(runtime_options) / sizeof(runtime_options[0]) + MAX_NF_OPTIONS];
	size_t n = 0;

	for (; runtime_options[n].name; n++)
		table[n] = runtime_options[n];
	for (size_t i = 0; xnf_nf_options && xnf_nf_options[i].name && i < MAX_NF_OPTIONS; i++)
		table[n++] = (struct option){ xnf_nf_options[i].name, required_argument, NULL, OPT_NF_BASE + (int)i };
	table[n] = (struct option){ 0 };
	return table;
}

/* --NAME VALUE of the NF's own: kept as its rule line, checked with the codec before anything loads. */
static int take_nf_option(int index, const char *value, struct run_options *opt)
{
	const struct xnf_nf_option *o = &xnf_nf_options[index];
	struct xnf_rule_entry entry;
	char line[XNF_RULE_MAX_TEXT], reason[512];

	snprintf(line, sizeof(line), o->rule_format, value);
	if (!xnf_nf_rules || xnf_nf_rules->parse(line, &entry, reason, sizeof(reason))) {
		xnf_error("--%s %s: %s", o->name, value, xnf_nf_rules ? reason : "the NF takes no rules");
		return -1;
	}
	if (opt->noption_rules == XNF_MAX_OPTION_RULES) {
		xnf_error("too many of %s's own options", xnf_nf_name);
		return -1;
	}
	opt->option_names[opt->noption_rules] = o->name;
	opt->option_rules[opt->noption_rules++] = strdup(line);
	return 0;
}

static int parse_run_options(int argc, char **argv, struct run_options *opt)
{
	const struct option *long_options = all_options();
	int c;

	opt->afxdp = afxdp_defaults;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:i:r:n:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'm': opt->mode = optarg; break;
		case 'r': opt->rules = optarg; break;
		case 'n': opt->name = optarg; break;
		case 'v': xnf_verbose = true; break;
		case OPT_RUN_DIR: opt->run_dir = optarg; break;
		case OPT_MAP_SIZE:
			if (parse_map_size(optarg, opt))
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		case 'i':
			if (opt->nifaces == XNF_MAX_PORTS) {
				xnf_error("more than %d interfaces given", XNF_MAX_PORTS);
				return -1;
			}
			opt->ifaces[opt->nifaces++] = optarg;
			break;
		case ':':
			xnf_error("option %s needs a value", argv[optind - 1]);
			return -1;
		case '?':
			xnf_error("unknown option %s (see --help)", argv[optind - 1]);
			return -1;
		default:
			if (c >= OPT_NF_BASE) {
				if (take_nf_option(c - OPT_NF_BASE, optarg, opt))
					return -1;
				break;
			}
			if (!opt->afxdp_option)
				opt->afxdp_option = argv[optind - 1 - (optarg && optarg == argv[optind - 1])];
			if (parse_afxdp_option(c, optarg, &opt->afxdp))
				return -1;
		}
	}
	if (optind < argc) {
		xnf_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	if (opt->afxdp.copy_fallback && !opt->afxdp.zerocopy) {
		xnf_error("--copy-fallback only makes sense with --zerocopy");
		return -1;
	}
	if (!opt->name)
		opt->name = default_instance_name();
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_options opt = { 0 };
	const struct mode_info *mode;

	if (parse_run_options(argc, argv, &opt))
		return EXIT_USAGE;
	mode = check_mode(opt.mode);
	if (!mode)
		return EXIT_USAGE;
	if (!mode->sockets && opt.afxdp_option) {
		xnf_error("%s only applies to the AF_XDP modes (afxdp, afxdp-sysc, afxdp-poll, xdp-sk, "
			  "xdp-sk-sysc), not to --mode %s", opt.afxdp_option, mode->name);
		return EXIT_USAGE;
	}
	opt.afxdp.wait = mode->wait;
	opt.afxdp.nf_in_kernel = mode->datapath != XNF_DATAPATH_USER;
	opt.afxdp.forward_only = mode->datapath == XNF_DATAPATH_HYBRID;
	return xnf_instance_run(&opt, mode);
}

static int cmd_check_rules(int argc, char **argv)
{
	char err[1024];
	int n;

	if (argc != 2) {
		xnf_error("check-rules takes one file: xnf-%s check-rules FILE", xnf_nf_name);
		return EXIT_USAGE;
	}
	n = xnf_rules_check_file(argv[1], err, sizeof(err));
	if (n < 0) {
		xnf_error("%s", err);
		return 1;
	}
	printf("%s: %d rules, all valid\n", argv[1], n);
	return 0;
}

static int cmd_describe(void)
{
	printf("{\"nf\": ");
	xnf_json_string(stdout, xnf_nf_name);
	printf(", \"rules_syntax\": ");
	xnf_json_string(stdout, xnf_nf_rules ? xnf_nf_rules->syntax : "");
	printf(", \"counters\": [");
	for (size_t i = 0; xnf_nf_counter_names[i]; i++) {
		printf("%s", i ? ", " : "");
		xnf_json_string(stdout, xnf_nf_counter_names[i]);
	}
	printf("], \"maps\": {");
	for (size_t i = 0, shown = 0; xnf_native_map_at(i); i++) {
		const struct xnf_map *map = xnf_native_map_at(i);

		if (xnf_map_is_glue(map->name))
			continue;
		printf("%s\"%s\": %u", shown++ ? ", " : "", map->name, map->max_entries);
	}
	printf("}, \"modes\": {");
	for (size_t i = 0; i < xnf_nmodes; i++)
		printf("%s\"%s\": %s", i ? ", " : "", xnf_modes[i].name, xnf_modes[i].available ? "true" : "false");
	printf("}}\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "check-rules") == 0)
		return cmd_check_rules(argc - 1, argv + 1);
	if (strcmp(argv[1], "describe") == 0)
		return cmd_describe();
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	xnf_error("unknown command '%s': use run, check-rules or describe", argv[1]);
	return EXIT_USAGE;
}
