// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main() of every NF binary (build/bin/xnf-<nf>): one binary per NF, with the
 * NF's BPF object embedded and its native function linked in, so one file
 * runs every mode.
 *
 *   xnf-<nf> run --mode MODE --iface IF [--iface IF2 ...] [--rules FILE] [--name NAME]
 *   xnf-<nf> check-rules FILE
 *   xnf-<nf> describe
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <xnf/nf_entry.h>
#include <xnf/runtime/control.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/xdp_instance.h>

#define EXIT_USAGE 2

struct mode_info {
	const char *name;
	bool available;
	bool generic;
	const char *summary;
};

/* Every mode the research measures; the AF_XDP ones arrive with lib/afxdp. */
static const struct mode_info modes[] = {
	{ "xdp", true, false, "the NF runs in the kernel, native (driver) XDP" },
	{ "xdp-generic", true, true, "the NF runs in the kernel, generic (skb) XDP" },
	{ "afxdp", false, false, "user space, busy loop on the rings, driver run by softirq" },
	{ "afxdp-sysc", false, false, "user space, preferred busy poll, driver run by syscalls" },
	{ "afxdp-poll", false, false, "user space, poll() wait" },
	{ "xdp-sk", false, false, "kernel NF with AF_XDP sockets open" },
	{ "xdp-sk-sysc", false, false, "kernel NF with AF_XDP sockets in busy-poll mode" },
	{ "hybrid", false, false, "XDP drops and passes, AF_XDP forwards" },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct run_options {
	const char *mode;
	char *ifaces[XNF_MAX_PORTS + 1];
	__u32 nifaces;
	const char *rules;
	const char *name;
	const char *run_dir;
};

struct instance {
	const struct run_options *opt;
	const struct mode_info *mode;
	struct xnf_xdp_instance xdp;
	struct xnf_control_server control;
	struct timespec started;
};

static const char *const stat_names[XNF_STAT_NSLOTS] = {
	[XNF_STAT_ABORT] = "abort",
	[XNF_STAT_DROP] = "drop",
	[XNF_STAT_PASS] = "pass",
	[XNF_STAT_TX] = "tx",
	[XNF_STAT_REDIRECT] = "redirect",
	[XNF_STAT_REDIRECT_ERROR] = "redirect_error",
	[XNF_STAT_MALFORMED] = "malformed",
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xnf-%s run --mode MODE --iface IF [--iface IF ...] [--rules FILE] [--name NAME]\n"
		"       xnf-%s check-rules FILE\n"
		"       xnf-%s describe\n"
		"\n"
		"  -m, --mode MODE    where the NF runs (see below)\n"
		"  -i, --iface IF     a port; give it again for more ports (at most %d), numbered in order\n"
		"  -r, --rules FILE   rules to load before traffic flows (loaded whole or not at all)\n"
		"  -n, --name NAME    instance name for 'xnf stats' and 'xnf rules' (default: the NF's)\n"
		"      --run-dir DIR  where control sockets live (default $XNF_RUN_DIR or %s)\n"
		"  -v, --verbose      show libbpf's messages\n"
		"\nmodes:\n",
		xnf_nf_name, xnf_nf_name, xnf_nf_name, XNF_MAX_PORTS, XNF_DEFAULT_RUN_DIR);
	for (size_t i = 0; i < NMODES; i++)
		fprintf(out, "  %-12s %s%s\n", modes[i].name, modes[i].summary,
			modes[i].available ? "" : " (not yet available)");
}

static const struct mode_info *find_mode(const char *name)
{
	for (size_t i = 0; i < NMODES; i++) {
		if (strcmp(modes[i].name, name) == 0)
			return &modes[i];
	}
	return NULL;
}

static const struct mode_info *check_mode(const char *name)
{
	const struct mode_info *mode;

	if (!name) {
		xnf_error("no mode given: add --mode xdp (or see --help for all modes)");
		return NULL;
	}
	mode = find_mode(name);
	if (!mode) {
		fprintf(stderr, "xnf: error: unknown mode '%s': choose one of", name);
		for (size_t i = 0; i < NMODES; i++)
			fprintf(stderr, "%s %s", i ? "," : "", modes[i].name);
		fputc('\n', stderr);
		return NULL;
	}
	if (!mode->available) {
		xnf_error("mode '%s' is not available in this version of xnf: use xdp or xdp-generic", name);
		return NULL;
	}
	return mode;
}

static int parse_run_options(int argc, char **argv, struct run_options *opt)
{
	enum { OPT_RUN_DIR = 1000 };
	static const struct option long_options[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "iface", required_argument, NULL, 'i' },
		{ "rules", required_argument, NULL, 'r' },
		{ "name", required_argument, NULL, 'n' },
		{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:i:r:n:vh", long_options, NULL)) != -1) {
		switch (c) {
		case 'm': opt->mode = optarg; break;
		case 'r': opt->rules = optarg; break;
		case 'n': opt->name = optarg; break;
		case 'v': xnf_verbose = true; break;
		case OPT_RUN_DIR: opt->run_dir = optarg; break;
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
		default:
			xnf_error("unknown option %s (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		xnf_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	if (!opt->name)
		opt->name = xnf_nf_name;
	return 0;
}

/* ---------------------------------------------------------------- control handlers */

/* Opens a JSON object with the fields every answer starts with. */
static void write_identity(FILE *out, const struct instance *in)
{
	fprintf(out, "{\"name\": ");
	xnf_json_string(out, in->opt->name);
	fprintf(out, ", \"nf\": ");
	xnf_json_string(out, xnf_nf_name);
	fprintf(out, ", \"mode\": ");
	xnf_json_string(out, in->mode->name);
}

static int write_info(void *ctx, FILE *out)
{
	struct instance *in = ctx;

	write_identity(out, in);
	fprintf(out, ", \"pid\": %d, \"has_rules\": %s, \"ports\": [", (int)getpid(),
		xnf_nf_rules ? "true" : "false");
	for (__u32 i = 0; i < in->xdp.nports; i++) {
		fprintf(out, "%s{\"port\": %u, \"iface\": ", i ? ", " : "", i);
		xnf_json_string(out, in->xdp.ports[i].name);
		fprintf(out, ", \"ifindex\": %d}", in->xdp.ports[i].ifindex);
	}
	fprintf(out, "]}\n");
	return 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static int write_stats(void *ctx, FILE *out)
{
	struct instance *in = ctx;
	struct xnf_counter totals[XNF_STAT_NSLOTS];
	int err = xnf_xdp_read_stats(&in->xdp, totals);

	if (err)
		return -1;
	write_identity(out, in);
	fprintf(out, ", \"uptime_s\": %.3f, \"verdicts\": {", seconds_since(&in->started));
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
		fprintf(out, "%s\"%s\": {\"packets\": %llu, \"bytes\": %llu}", slot ? ", " : "",
			stat_names[slot], (unsigned long long)totals[slot].packets,
			(unsigned long long)totals[slot].bytes);
	fprintf(out, "}}\n");
	return 0;
}

/* ---------------------------------------------------------------- run */

static int make_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC);
}

static void serve_until_signal(struct instance *in, int sig_fd)
{
	const struct xnf_control_handlers handlers = {
		.ctx = in,
		.info = write_info,
		.stats = write_stats,
		.rules = { .resolve = xnf_xdp_resolve_map, .ctx = &in->xdp },
	};
	struct pollfd fds[2] = {
		{ .fd = sig_fd, .events = POLLIN },
		{ .fd = in->control.listen_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			xnf_error("poll failed: %s", strerror(errno));
			return;
		}
		if (fds[0].revents)
			return;
		if (fds[1].revents)
			xnf_control_serve_one(&in->control, &handlers);
	}
}

static int load_rules(struct instance *in)
{
	struct xnf_rules_target target = { .resolve = xnf_xdp_resolve_map, .ctx = &in->xdp };
	char err[1024];
	int n;

	if (!in->opt->rules)
		return 0;
	n = xnf_rules_load_file(in->opt->rules, &target, err, sizeof(err));
	if (n < 0) {
		xnf_error("%s", err);
		return -1;
	}
	xnf_info("loaded %d rules from %s", n, in->opt->rules);
	return 0;
}

static int check_rules_early(const char *path)
{
	char err[1024];

	if (!path)
		return 0;
	if (xnf_rules_check_file(path, err, sizeof(err)) < 0) {
		xnf_error("%s", err);
		return -1;
	}
	return 0;
}

static void print_ready(const struct instance *in)
{
	printf("xnf: %s running as '%s' in %s mode on", xnf_nf_name, in->opt->name, in->mode->name);
	for (__u32 i = 0; i < in->xdp.nports; i++)
		printf(" %s", in->xdp.ports[i].name);
	printf(" (control socket %s); Ctrl-C stops it\n", in->control.path);
	fflush(stdout);
}

static int cmd_run(int argc, char **argv)
{
	struct run_options opt = { 0 };
	struct xnf_port ports[XNF_MAX_PORTS];
	struct instance in = { .opt = &opt };
	int sig_fd, rc = 1;

	if (parse_run_options(argc, argv, &opt))
		return EXIT_USAGE;
	in.mode = check_mode(opt.mode);
	if (!in.mode)
		return EXIT_USAGE;
	if (geteuid() != 0) {
		xnf_error("xnf run needs root (CAP_BPF and CAP_NET_ADMIN) to load XDP programs: run it with sudo");
		return 1;
	}
	if (xnf_ports_resolve(opt.ifaces, opt.nifaces, ports) || check_rules_early(opt.rules))
		return 1;
	sig_fd = make_signalfd();
	if (sig_fd < 0) {
		xnf_error("cannot set up signal handling: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	in.control.listen_fd = -1;
	if (xnf_control_open(&in.control, xnf_run_dir(opt.run_dir), opt.name))
		goto out;
	if (xnf_xdp_load(&in.xdp, ports, opt.nifaces, in.mode->generic) || load_rules(&in) ||
	    xnf_xdp_attach(&in.xdp))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &in.started);
	print_ready(&in);
	serve_until_signal(&in, sig_fd);
	rc = 0;
out:
	xnf_xdp_destroy(&in.xdp);
	xnf_control_close(&in.control);
	close(sig_fd);
	return rc;
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
	printf(", \"modes\": {");
	for (size_t i = 0; i < NMODES; i++)
		printf("%s\"%s\": %s", i ? ", " : "", modes[i].name, modes[i].available ? "true" : "false");
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
