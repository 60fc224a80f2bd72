// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main() of every NF binary (build/bin/xnf-<nf>): one binary per NF, with the
 * NF's BPF object embedded and its native function linked in, so one file
 * runs every mode.
 *
 *   xnf-<nf> run --mode MODE --iface IF [--iface IF2 ...] [options]
 *   xnf-<nf> check-rules FILE
 *   xnf-<nf> check-run RUN-OPTIONS     (what a start would check first, changing nothing: start_check.c)
 *   xnf-<nf> describe [--json]
 *   xnf-<nf> cost --frames FILE.pcap [--rules FILE] [--repeat N]   (what it costs per frame, nf_cost.c)
 *
 * The options are one table (below, with the NF's own appended): it parses
 * them, prints --help, and `describe` writes it out with the modes, the stat
 * names and the limits, so that the Python CLI restates none of it.
 */
#include <arpa/inet.h> /* before the linux headers */
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/control.h>
#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/conntrack_list.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/port_checks.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/rules_tables.h>
#include <xnf/runtime/stats.h>
#include <xnf/internal/chain.h>

#include "capture_session.h"
#include "instance.h"
#include "nf_cost.h"
#include "start_check.h"

#define EXIT_USAGE 2
#define MAX_NF_OPTIONS 8

/* Tags in the table's id: which options only the AF_XDP modes take, which are the NF's own. */
/* TAG_AT_TC: an option only the modes at the tc hook take. */
enum { TAG_AFXDP = 1, TAG_NF_OPTION, TAG_OFFLOAD, TAG_AT_TC };

#define RUN(field) offsetof(struct run_options, field)
#define AFXDP(field) offsetof(struct run_options, afxdp.field)
#define AFXDP_SECTION "AF_XDP modes (those with sockets: see modes)"
#define OFFLOAD_SECTION "offloading hot drop rules (user-space modes)"
#define NF_SECTION "this NF's own options (each stands for a rule line)"

static const char *mode_names[16];

static int take_mode(const struct xnf_option *o, const char *text, void *opts);
static int take_iface(const struct xnf_option *o, const char *text, void *opts);
static int take_map_size(const struct xnf_option *o, const char *text, void *opts);
static int take_nf_option(const struct xnf_option *o, const char *text, void *opts);
static int take_local(const struct xnf_option *o, const char *text, void *opts);

static const struct xnf_option runtime_options[] = {
	{ .name = "mode", .short_name = 'm', .kind = XNF_OPT_CUSTOM, .value = "MODE", .choices = mode_names,
	  .help = "where the NF runs (the modes below)", .parse = take_mode },
	{ .name = "iface", .short_name = 'i', .kind = XNF_OPT_CUSTOM, .value = "IF", .repeat = true,
	  .help = "a port; give it again for more ports (at most " XNF_STR(XNF_MAX_PORTS) "), numbered in order",
	  .parse = take_iface },
	{ .name = "rules", .short_name = 'r', .kind = XNF_OPT_STRING, .value = "FILE", .offset = RUN(rules),
	  .help = "rules to load before traffic flows (loaded whole or not at all)" },
	{ .name = "name", .short_name = 'n', .kind = XNF_OPT_STRING, .value = "NAME", .offset = RUN(name),
	  .help = "instance name for 'xnf stats' and 'xnf rules'", .default_text = "the NF's name" },
	{ .name = "run-dir", .kind = XNF_OPT_STRING, .value = "DIR", .offset = RUN(run_dir),
	  .help = "where control sockets live", .default_text = "$XNF_RUN_DIR or " XNF_DEFAULT_RUN_DIR },
	{ .name = "map-size", .kind = XNF_OPT_CUSTOM, .value = "MAP=N", .repeat = true, .parse = take_map_size,
	  .help = "give one of the NF's maps N entries (K, M, G: times 1024, 1024^2, 1024^3)" },
	{ .name = "attach", .kind = XNF_OPT_CHOICE, .value = "VIA", .offset = RUN(attach), .choices = xnf_attach_names,
	  .help = "link: the program takes the XDP hook alone, or joins the port's TCX chain at\n"
		  "--mode tc (a bpf_link: it leaves with the process); libxdp: it joins libxdp's\n"
		  "dispatcher, in front of or behind other programs by --priority (needs bpffs);\n"
		  "clsact: at --mode tc, a clsact filter, which tc filter show lists (see\n"
		  "docs/operations.md)" },
	{ .name = "priority", .kind = XNF_OPT_UINT, .value = "N", .offset = RUN(priority), .min = 0, .max = 1000,
	  .help = "--attach libxdp: the run priority, lower runs first; the next program runs\n"
		  "when this one passes a frame (XDP_PASS)" },
	{ .name = "pin", .kind = XNF_OPT_STRING, .value = "DIR", .offset = RUN(pin_dir),
	  .help = "pin the maps in bpffs as DIR/MAP while it runs (bpftool map dump pinned\n"
		  "DIR/MAP); removed when it stops" },
	{ .name = "state", .kind = XNF_OPT_STRING, .value = "DIR", .offset = RUN(state_dir),
	  .help = "keep the program attached and its maps in bpffs DIR when it stops (or is\n"
		  "killed): it forwards on with its rules and sessions, and the next start with\n"
		  "DIR takes them over without a gap; rm -r DIR takes it off (xdp, tc, hybrid; the\n"
		  "AF_XDP modes hand their tables to the kernel build of the NF when they stop)" },
	{ .name = "peers", .kind = XNF_OPT_CHOICE, .value = "POLICY", .offset = RUN(peers), .choices = xnf_peers_names,
	  .help = "the other end of a veth port: fix turns GRO on where the port would take no\n"
		  "XDP frames and checksum offload off, on a peer xnf can reach, and puts both\n"
		  "back when it stops; check changes nothing (docs/containers.md)" },
	{ .name = "tc-send", .kind = XNF_OPT_CHOICE, .value = "HOW", .offset = RUN(tc_send), .choices = xnf_tc_send_names,
	  .id = TAG_AT_TC,
	  .help = "--mode tc, out of a veth whose peer is in another namespace: peer hands the\n"
		  "frame to the peer's receive (bpf_redirect_peer, the fast way); device sends it\n"
		  "out of the port (bpf_redirect), where an XDP program on the peer sees it" },
	{ .name = "verbose", .short_name = 'v', .kind = XNF_OPT_FLAG, .offset = RUN(verbose),
	  .help = "show libbpf's messages" },
	{ .name = "verifier-stats", .kind = XNF_OPT_FLAG, .offset = RUN(verifier_stats),
	  .help = "say how much of the verifier's budget the kernel program took (instructions\n"
		  "processed of its 1,000,000, states), as it loads" },
	{ .name = "queues", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(queues), .min = 1, .max = XNF_MAX_QUEUES, .help = "serve queues 0..N-1 of every port" },
	{ .name = "workers", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(workers), .min = 1, .max = XNF_MAX_WORKERS,
	  .help = "worker threads, each serving whole queues" },
	{ .name = "cores", .kind = XNF_OPT_CORES, .value = "LIST", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(cores), .help = "pin worker i to the i-th core", .default_text = "from the last core down" },
	{ .name = "batch", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(batch), .min = 1, .max = 256, .help = "packets per batch, at most the ring size" },
	{ .name = "ring-size", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(ring_size), .min = 64, .max = 16384,
	  .help = "rx/tx/fill/completion ring size, a power of two" },
	{ .name = "frame-size", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(frame_size), .min = 1, .max = 65536, .help = "UMEM frame size, 2048 or 4096" },
	{ .name = "frames", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(frames), .min = 1, .max = 1 << 24, .help = "UMEM frames per worker",
	  .default_text = "three ring sizes per socket, and a live batch" },
	{ .name = "zerocopy", .kind = XNF_OPT_FLAG, .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(zerocopy), .help = "bind in zero-copy mode (fails where the driver lacks it)" },
	{ .name = "copy-fallback", .kind = XNF_OPT_FLAG, .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(copy_fallback), .help = "with --zerocopy: use copy mode where zero-copy is missing" },
	{ .name = "no-need-wakeup", .kind = XNF_OPT_FLAG, .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = RUN(no_need_wakeup), .help = "do not use the need_wakeup flag" },
	{ .name = "busy-poll-usec", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(busy_poll_usec), .min = 0, .max = 1000000, .help = "the -sysc modes: SO_BUSY_POLL" },
	{ .name = "busy-poll-budget", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION,
	  .id = TAG_AFXDP, .offset = AFXDP(busy_poll_budget), .min = 1, .max = 65535,
	  .help = "the -sysc modes: SO_BUSY_POLL_BUDGET" },
	{ .name = "tx-budget", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(tx_budget), .min = 1, .max = 1 << 20, .default_text = "the kernel's, 32",
	  .help = "the xsk ring in copy mode: descriptors one sendto() may send (32..ring; kernels\n"
		  "that have it: xnf doctor, xsk_tx_budget)" },
	{ .name = "xmit-batch", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(xmit_batch), .min = 1, .max = 1 << 20, .default_text = "not set",
	  .help = "the xsk ring in copy mode: skbs given to the driver at once (kernels that have\n"
		  "it: xnf doctor, xsk_xmit_batch)" },
	{ .name = "tx-path", .kind = XNF_OPT_CHOICE, .value = "PATH", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(tx_path), .choices = xnf_tx_path_names,
	  .help = "how workers send: live (XDP's own transmit, one BPF_PROG_RUN call per batch),\n"
		  "xsk (the socket's tx ring), auto (live on copy-mode sockets where the kernel\n"
		  "runs it and the port takes frames from XDP, else xsk)" },
	{ .name = "live-batch", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(live_batch), .min = 1, .max = 1 << 20, .help = "live path: frames one call sends at most" },
	{ .name = "local", .kind = XNF_OPT_CUSTOM, .value = "tcp:PORT|udp:PORT|queue:N", .section = AFXDP_SECTION,
	  .id = TAG_AFXDP, .repeat = true, .parse = take_local,
	  .help = "user-space modes: send this traffic to the local stack in XDP, before the NF\n"
		  "(a local service by destination port, or every frame of an rx queue that has no\n"
		  "socket); counted as local", .default_text = "none" },
	{ .name = "split", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = RUN(chain_split), .min = 1, .max = XNF_CHAIN_MAX_MEMBERS - 1, .default_text = "not split",
	  .help = "chains, user-space modes: the first N members run in XDP, the rest in the\n"
		  "workers (what they drop or pass never leaves the kernel)" },
	{ .name = "offload-drops", .kind = XNF_OPT_FLAG, .section = OFFLOAD_SECTION, .id = TAG_AFXDP,
	  .offset = RUN(offload.enabled),
	  .help = "copy the NF's hottest pure-drop rules into an XDP pre-filter while they are hot\n"
		  "(NFs that declare them: the firewall's drop rules)" },
	{ .name = "offload-above", .kind = XNF_OPT_UINT, .value = "PPS", .section = OFFLOAD_SECTION, .id = TAG_OFFLOAD,
	  .offset = RUN(offload.above_pps), .min = 1, .max = 1u << 31,
	  .help = "a rule dropping at least PPS packets a second goes into the kernel" },
	{ .name = "offload-below", .kind = XNF_OPT_UINT, .value = "PPS", .section = OFFLOAD_SECTION, .id = TAG_OFFLOAD,
	  .offset = RUN(offload.below_pps), .min = 0, .max = 1u << 31,
	  .help = "an offloaded rule dropping fewer than PPS a second comes back out" },
	{ .name = "offload-table", .kind = XNF_OPT_UINT, .value = "N", .section = OFFLOAD_SECTION, .id = TAG_OFFLOAD,
	  .offset = RUN(offload.table), .min = 1, .max = XNF_MAX_OFFLOADED_DROPS,
	  .help = "rules the kernel holds at once (the hottest win a full table)" },
	{ .name = "offload-interval-ms", .kind = XNF_OPT_UINT, .value = "MS", .section = OFFLOAD_SECTION,
	  .id = TAG_OFFLOAD, .offset = RUN(offload.interval_ms), .min = 10, .max = 60000,
	  .help = "how often the rules' drop rates are measured" },
	{ .name = "live-wait-us", .kind = XNF_OPT_UINT, .value = "N", .section = AFXDP_SECTION, .id = TAG_AFXDP,
	  .offset = AFXDP(live_wait_us), .min = 0, .max = 1000000,
	  .help = "live path: the longest a frame waits for its call while frames keep\n"
		  "coming; a round that finds no packet sends at once" },
};

#define NRUNTIME (sizeof(runtime_options) / sizeof(runtime_options[0]))

static const struct run_options defaults = {
	.afxdp = {
		.queues = 1, .workers = 1, .batch = 64, .ring_size = 2048, .frame_size = 4096,
		.need_wakeup = true, .busy_poll_usec = 20, .busy_poll_budget = 64,
		.tx_path = XNF_TX_AUTO, .live_batch = 1024, .live_wait_us = 50,
	},
	.offload = { .above_pps = 10000, .below_pps = 1000, .table = 256, .interval_ms = 200 },
	.attach = XNF_ATTACH_LINK, .priority = XNF_LIBXDP_DEFAULT_PRIORITY,
};

const char *const xnf_attach_names[] = { [XNF_ATTACH_LINK] = "link", [XNF_ATTACH_LIBXDP] = "libxdp",
					 [XNF_ATTACH_CLSACT] = "clsact", NULL };
const char *const xnf_tc_send_names[] = { [XNF_TC_SEND_PEER] = "peer", [XNF_TC_SEND_DEVICE] = "device", NULL };

/* The runtime's options and the NF's own, in one table; the NF's take their values as rule lines. */
static const struct xnf_option *option_table(void)
{
	static struct xnf_option table[NRUNTIME + MAX_NF_OPTIONS + 1];
	size_t n = 0;

	for (size_t i = 0; xnf_modes[i].name && i < xnf_nmodes && i + 1 < sizeof(mode_names) / sizeof(*mode_names);
	     i++)
		mode_names[i] = xnf_modes[i].name;
	for (; n < NRUNTIME; n++)
		table[n] = runtime_options[n];
	for (size_t i = 0; xnf_nf_options && xnf_nf_options[i].name && i < MAX_NF_OPTIONS; i++)
		table[n++] = (struct xnf_option){ .name = xnf_nf_options[i].name, .kind = XNF_OPT_CUSTOM,
						  .value = xnf_nf_options[i].value, .help = xnf_nf_options[i].help,
						  .section = NF_SECTION, .parse = take_nf_option, .id = TAG_NF_OPTION };
	table[n] = (struct xnf_option)XNF_OPTIONS_END;
	return table;
}

static int take_mode(const struct xnf_option *o, const char *text, void *opts)
{
	struct run_options *opt = opts;

	opt->mode = xnf_find_mode(text);
	if (opt->mode)
		return 0;
	fprintf(stderr, "xnf: error: unknown mode '%s': choose one of", text);
	for (size_t i = 0; i < xnf_nmodes; i++)
		fprintf(stderr, "%s %s", i ? "," : "", xnf_modes[i].name);
	fputc('\n', stderr);
	return -1;
}

static int take_iface(const struct xnf_option *o, const char *text, void *opts)
{
	struct run_options *opt = opts;

	return xnf_ports_add_name(opt->ifaces, &opt->nifaces, text);
}

/* NAME=ENTRIES, with an optional binary K/M/G multiplier. */
static int take_map_size(const struct xnf_option *o, const char *text, void *opts)
{
	struct run_options *opt = opts;
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
		xnf_error("--map-size %s: the entry count must be a whole number from 1 to 4294967295 (4G less one), "
			  "with an optional K, M or G", text);
		return -1;
	}
	opt->map_sizes[opt->nmap_sizes].name = strndup(text, eq - text);
	opt->map_sizes[opt->nmap_sizes++].entries = (__u32)n;
	return 0;
}

/* --local tcp:PORT, udp:PORT or queue:N: the dispatcher's table. */
static int take_local(const struct xnf_option *o, const char *text, void *opts)
{
	struct xnf_local_dispatch *local = &((struct run_options *)opts)->local;
	const char *colon = strchr(text, ':');
	__u32 n;

	if (colon && strncmp(text, "queue:", 6) == 0) {
		if (xnf_parse_uint("--local queue", colon + 1, 0, XNF_MAX_QUEUES - 1, &n))
			return -1;
		local->queues |= 1u << n;
		return 0;
	}
	if (!colon || (strncmp(text, "tcp:", 4) && strncmp(text, "udp:", 4))) {
		xnf_error("--local takes tcp:PORT, udp:PORT or queue:N, not '%s'", text);
		return -1;
	}
	if (xnf_parse_uint("--local port", colon + 1, 1, 65535, &n))
		return -1;
	if (local->nports == XNF_MAX_LOCAL_PORTS) {
		xnf_error("--local: at most %d local services", XNF_MAX_LOCAL_PORTS);
		return -1;
	}
	local->ports[local->nports++] = (struct xnf_local_key){ .proto = text[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP,
								 .port = htons((__u16)n) };
	return 0;
}

/* --NAME VALUE of the NF's own: kept as its rule line, checked with the codec before anything loads. */
static int take_nf_option(const struct xnf_option *o, const char *text, void *opts)
{
	struct run_options *opt = opts;
	const struct xnf_nf_option *nf_opt = NULL;
	struct xnf_rule_entry entry;
	char line[XNF_RULE_MAX_TEXT], reason[512];

	for (size_t i = 0; xnf_nf_options[i].name && !nf_opt; i++)
		nf_opt = strcmp(xnf_nf_options[i].name, o->name) ? NULL : &xnf_nf_options[i];
	snprintf(line, sizeof(line), nf_opt->rule_format, text);
	if (!xnf_nf_rules || xnf_nf_rules->parse(line, &entry, reason, sizeof(reason))) {
		xnf_error("--%s %s: %s", o->name, text, xnf_nf_rules ? reason : "the NF takes no rules");
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

static void print_modes(FILE *out)
{
	fprintf(out, "\nmodes:\n");
	for (size_t i = 0; i < xnf_nmodes; i++)
		fprintf(out, "  %-12s %s%s\n", xnf_modes[i].name, xnf_modes[i].summary,
			xnf_modes[i].available ? "" : " (not yet available)");
}

static void usage(FILE *out)
{
	char text[512];

	snprintf(text, sizeof(text), "usage: xnf-%s run --mode MODE --iface IF [--iface IF ...] [options]\n"
		 "       xnf-%s doctor --iface IF [--iface IF ...] [--mode MODE] [options] [--json]\n"
		 "       xnf-%s check-rules FILE\n       xnf-%s check-run RUN-OPTIONS\n"
		 "       xnf-%s describe [--json]\n"
		 "       xnf-%s cost --frames FILE.pcap [--rules FILE] [--repeat N]", xnf_nf_name, xnf_nf_name,
		 xnf_nf_name, xnf_nf_name, xnf_nf_name, xnf_nf_name);
	xnf_options_help(out, option_table(), text, &defaults);
	print_modes(out);
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

/* The first option given of those tagged tag (only the AF_XDP modes', only tc's), for the error in a mode that
 * takes none of them; NULL if none. */
static const char *first_tagged_option(const struct xnf_option *table, const bool *given, int tag)
{
	for (size_t i = 0; table[i].name; i++) {
		if (given[i] && table[i].id == tag)
			return table[i].name;
	}
	return NULL;
}

/* The members a chain binary has (its generated table); 0 in a single NF's binary. */
extern const struct xnf_chain_member xnf_chain_members[] __attribute__((weak));

static __u32 chain_length(void)
{
	__u32 n = 0;

	while (xnf_chain_members && xnf_chain_members[n].name)
		n++;
	return n;
}

/* --split N: a chain of more than N members, in a user-space mode; the instance then runs it split. */
static int check_split(struct run_options *opt)
{
	static struct mode_info split_mode;
	__u32 members = chain_length();

	if (!members) {
		xnf_error("--split divides a chain between XDP and the workers, and %s is one NF: run a chain "
			  "(xnf run chain:firewall@xdp,lb@afxdp)", xnf_nf_name);
		return -1;
	}
	if (opt->chain_split >= members) {
		xnf_error("--split %u: %s has %u members, and at least one must run in the workers: give 1 to %u",
			  opt->chain_split, xnf_nf_name, members, members - 1);
		return -1;
	}
	if (opt->mode->datapath != XNF_DATAPATH_USER) {
		xnf_error("--split runs a chain's last members in user space: give a user-space mode (%s), not "
			  "--mode %s", xnf_user_space_modes(), opt->mode->name);
		return -1;
	}
	if (opt->local.queues || opt->local.nports) {
		xnf_error("--local and --split do not go together: a split chain's kernel members already pass "
			  "local traffic to the stack in XDP");
		return -1;
	}
	split_mode = *opt->mode;
	split_mode.datapath = XNF_DATAPATH_SPLIT;
	opt->mode = &split_mode;
	return 0;
}

/* The offload settings only with --offload-drops, and that only where the NF declares pure-drop rules. */
static int check_priority(const struct run_options *opt, const struct xnf_option *table, const bool *given)
{
	for (size_t i = 0; table[i].name; i++) {
		if (given[i] && strcmp(table[i].name, "priority") == 0 && opt->attach != XNF_ATTACH_LIBXDP) {
			xnf_error("--priority orders the programs in libxdp's dispatcher: it needs --attach libxdp");
			return -1;
		}
	}
	return 0;
}

static int check_offload(const struct run_options *opt, const struct xnf_option *table, const bool *given)
{
	for (size_t i = 0; table[i].name; i++) {
		if (given[i] && table[i].id == TAG_OFFLOAD && !opt->offload.enabled) {
			xnf_error("--%s sets how --offload-drops works: add --offload-drops", table[i].name);
			return -1;
		}
	}
	return drop_offload_check(&opt->offload, opt->mode->datapath == XNF_DATAPATH_USER, xnf_nf_name);
}

static int check_run_options(struct run_options *opt, const struct xnf_option *table, const bool *given)
{
	const char *afxdp_option = first_tagged_option(table, given, TAG_AFXDP);
	const char *tc_option = first_tagged_option(table, given, TAG_AT_TC);

	if (!opt->mode) {
		xnf_error("no mode given: add --mode xdp (or see --help for all modes)");
		return -1;
	}
	if (!opt->mode->available) {
		xnf_error("mode '%s' is not available in this version of xnf", opt->mode->name);
		return -1;
	}
	if (!opt->mode->sockets && afxdp_option) {
		xnf_error("--%s only applies to the AF_XDP modes (%s), not to --mode %s", afxdp_option,
			  xnf_socket_modes(), opt->mode->name);
		return -1;
	}
	if (opt->mode->hook != XNF_AT_TC && tc_option) {
		xnf_error("--%s only applies to --mode tc, not to --mode %s", tc_option, opt->mode->name);
		return -1;
	}
	if (opt->mode->hook == XNF_AT_TC && opt->attach == XNF_ATTACH_LIBXDP) {
		xnf_error("--attach libxdp is XDP's dispatcher: at --mode tc the program joins the port's TCX chain "
			  "beside other programs already");
		return -1;
	}
	if (opt->state_dir && !xnf_mode_keeps_state(opt->mode)) {
		xnf_error("--state keeps an NF's program and tables across restarts in --mode %s; --mode %s cannot keep "
			  "them yet", xnf_state_modes(), opt->mode->name);
		return -1;
	}
	if (opt->state_dir && (opt->local.queues || opt->local.nports || opt->offload.enabled)) {
		xnf_error("--state does not carry --local's dispatcher or --offload-drops' pre-filter yet: leave them out");
		return -1;
	}
	if (opt->state_dir && (opt->attach != XNF_ATTACH_LINK || opt->pin_dir || opt->chain_split)) {
		xnf_error("--state keeps the maps and the links itself: leave out --attach, --pin and --split");
		return -1;
	}
	if (opt->mode->hook != XNF_AT_TC && opt->attach == XNF_ATTACH_CLSACT) {
		xnf_error("--attach clsact puts the program in a tc filter: it is for --mode tc, not --mode %s",
			  opt->mode->name);
		return -1;
	}
	if ((opt->local.queues || opt->local.nports) && opt->mode->datapath != XNF_DATAPATH_USER) {
		xnf_error("--local is for the modes whose NF runs in user space (%s): in --mode %s the NF runs in the "
			  "kernel, where its own PASS verdict reaches the local stack", xnf_user_space_modes(),
			  opt->mode->name);
		return -1;
	}
	if (opt->local.queues & ((1u << opt->afxdp.queues) - 1)) {
		xnf_error("--local queue:%d: queues 0-%u have AF_XDP sockets (--queues %u); a local queue is one "
			  "past them", __builtin_ctz(opt->local.queues & ((1u << opt->afxdp.queues) - 1)),
			  opt->afxdp.queues - 1, opt->afxdp.queues);
		return -1;
	}
	if (opt->chain_split && check_split(opt))
		return -1;
	if (check_offload(opt, table, given) || check_priority(opt, table, given))
		return -1;
	if (opt->afxdp.copy_fallback && !opt->afxdp.zerocopy) {
		xnf_error("--copy-fallback only makes sense with --zerocopy");
		return -1;
	}
	opt->afxdp.need_wakeup = !opt->no_need_wakeup;
	opt->afxdp.journal_dir = xnf_run_dir(opt->run_dir);
	opt->afxdp.wait = opt->mode->wait;
	opt->afxdp.nf_in_kernel = opt->mode->datapath == XNF_DATAPATH_KERNEL ||
				  opt->mode->datapath == XNF_DATAPATH_HYBRID;
	opt->afxdp.forward_only = opt->mode->datapath == XNF_DATAPATH_HYBRID;
	if (!opt->name)
		opt->name = default_instance_name();
	xnf_verbose = opt->verbose;
	return 0;
}

/* An option that needs a facility this kernel refuses: refused by name, before anything is set up. */
static int refuse_without(enum xnf_facility facility, const char *asked)
{
	char why[512];

	if (xnf_kernel_has(facility))
		return 0;
	xnf_error("%s: %s", asked, xnf_kernel_refusal(facility, why, sizeof(why)));
	return -1;
}

/* What the mode and options ask of the kernel (the facility table, kernel.h): 0, or -1 after one message. */
static int check_kernel(const struct run_options *opt)
{
	if (xnf_mode_check_kernel(opt->mode))
		return -1;
	if (opt->attach == XNF_ATTACH_LIBXDP && refuse_without(XNF_KF_FREPLACE, "--attach libxdp (use --attach link)"))
		return -1;
	if (opt->state_dir && opt->mode->hook == XNF_AT_TC &&
	    refuse_without(XNF_KF_TCX, "--state at --mode tc (it keeps the program through a TCX link)"))
		return -1;
	if (!opt->mode->sockets)
		return 0;
	if (opt->afxdp.tx_path == XNF_TX_LIVE && refuse_without(XNF_KF_LIVE_FRAMES, "--tx-path live (use xsk or auto)"))
		return -1;
	if (opt->afxdp.tx_budget && refuse_without(XNF_KF_XSK_TX_BUDGET, "--tx-budget"))
		return -1;
	return opt->afxdp.xmit_batch && refuse_without(XNF_KF_XSK_XMIT_BATCH, "--xmit-batch") ? -1 : 0;
}

/* run's options read and checked as `command` takes them: 0; a positive value where --help or --version answered
 * (exit 0); or minus the exit status where they do not hold (EXIT_USAGE) or the kernel cannot run them (1), said. */
static int read_run_options(const char *command, int argc, char **argv, struct run_options *opt)
{
	const struct xnf_option *table = option_table();
	bool given[NRUNTIME + MAX_NF_OPTIONS] = { 0 };
	char text[96];
	int rc;

	snprintf(text, sizeof(text), "usage: xnf-%s %s --mode MODE --iface IF [--iface IF ...] [options]", xnf_nf_name,
		 command);
	rc = xnf_options_parse(table, argc, argv, opt, given, text, &defaults);
	if (rc > 0) {
		if (rc == 1)
			print_modes(stdout);
		return rc;
	}
	if (rc < 0 || check_run_options(opt, table, given))
		return -EXIT_USAGE;
	return check_kernel(opt) ? -1 : 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_options opt = defaults;
	int rc = read_run_options("run", argc, argv, &opt);

	if (rc)
		return rc > 0 ? 0 : -rc;
	if (xnf_check_folders(&opt))
		return 1;
	return xnf_instance_run(&opt, opt.mode);
}

/* `check-run` and run's options: what a start with them would check first, checked alone (start_check.c). */
static int cmd_check_run(int argc, char **argv)
{
	struct run_options opt = defaults;
	int rc = read_run_options("check-run", argc, argv, &opt);

	if (rc)
		return rc > 0 ? 0 : -rc;
	return xnf_start_check(&opt) ? 1 : 0;
}

/* Port facts in a line: what the port is, and what is at its other end. */
static void print_port_facts(const struct xnf_port_facts *f)
{
	const struct xnf_peer *peer = &f->peer;

	bool driver_differs = f->driver[0] && strcmp(f->driver, f->link.kind);

	printf("%s: %s%s%s, MTU %u, %u rx queue%s, %s", f->port.name, f->link.kind[0] ? f->link.kind : "device",
	       driver_differs ? ", driver " : "", driver_differs ? f->driver : "", f->link.mtu, f->rx_queues, f->rx_queues == 1 ? "" : "s",
	       f->link.flags & IFF_UP ? "up" : "down");
	if (f->xdp_features_known)
		printf(", %s XDP frames", f->xdp_features & XNF_XDP_ACT_NDO_XMIT ? "takes" : "takes no");
	if (f->link.hardware)
		printf(", native XDP %s, zero-copy %s (%s)", f->xdp_features & XNF_XDP_ACT_BASIC ? "yes" : "no",
		       f->xdp_features & XNF_XDP_ACT_XSK_ZEROCOPY ? "yes" : "no", f->link.parent);
	putchar('\n');
	if (peer->exists && peer->features_known)
		printf("  peer %s%s%s%s: GRO %s, checksum offload %s, %s XDP program, %u tx queue%s, MTU %u\n",
		       peer->link.name, peer->enter[0] ? " (" : "", peer->enter, peer->enter[0] ? ")" : "",
		       peer->gro ? "on" : "off", peer->tx_csum ? "on" : "off", peer->link.xdp_attached ? "an" : "no",
		       peer->tx_queues, peer->tx_queues == 1 ? "" : "s", peer->link.mtu);
	else if (peer->exists)
		printf("  peer: interface %d of namespace id %d, not reachable\n", f->link.peer_ifindex,
		       f->link.peer_nsid);
}

/* The port checks alone, as a start would judge the ports with these options; changes nothing. Exit 1 if a
 * port would lose frames. */
static int doctor_ports(const struct run_options *opt, bool json)
{
	struct xnf_port_use use = port_use_of(opt);
	struct xnf_port ports[XNF_MAX_PORTS];
	int worst = -1;

	if (xnf_ports_resolve(opt->ifaces, opt->nifaces, ports))
		return 1;
	if (xnf_mode_missing_facility(opt->mode) >= 0)
		worst = XNF_LEVEL_ERROR;
	if (json) {
		printf("{\"kernel\": ");
		xnf_kernel_table_json(stdout);
		printf(", \"mode\": \"%s\", \"mode_runs_here\": %s, \"ports\": [", opt->mode->name,
		       worst == XNF_LEVEL_ERROR ? "false" : "true");
	} else {
		xnf_kernel_table_print(stdout);
		if (worst == XNF_LEVEL_ERROR)
			xnf_mode_check_kernel(opt->mode);
	}
	for (__u32 i = 0; i < opt->nifaces; i++) {
		struct xnf_port_facts f;
		int err = xnf_port_inspect(&ports[i], &f);

		if (err) {
			xnf_error("cannot read %s's link (%s)", ports[i].name, strerror(-err));
			return 1;
		}
		xnf_port_judge(&f, &use);
		if (xnf_port_worst(&f) > worst)
			worst = xnf_port_worst(&f);
		if (json) {
			printf("%s", i ? ", " : "");
			xnf_port_facts_json(stdout, &f);
		} else {
			print_port_facts(&f);
			for (__u32 j = 0; j < f.nproblems; j++) {
				xnf_port_problem_print(stdout, "  ", &f.problems[j]);
			}
		}
		xnf_port_release(&f);
	}
	if (json)
		printf("], \"ok\": %s}\n", worst == XNF_LEVEL_ERROR ? "false" : "true");
	else if (worst < 0)
		printf("no problems for --mode %s\n", opt->mode->name);
	return worst == XNF_LEVEL_ERROR ? 1 : 0;
}

static int cmd_doctor(int argc, char **argv)
{
	const struct xnf_option *table = option_table();
	bool given[NRUNTIME + MAX_NF_OPTIONS] = { 0 }, json = false;
	struct run_options opt = defaults;
	char text[128];
	int rc, kept = 0;

	/* --json is doctor's own; the rest are run's options, judged as a start would. */
	for (int i = 0; i < argc; i++) {
		if (i > 0 && strcmp(argv[i], "--json") == 0)
			json = true;
		else
			argv[kept++] = argv[i];
	}
	snprintf(text, sizeof(text), "usage: xnf-%s doctor --iface IF [--iface IF ...] [--mode MODE] [options] [--json]",
		 xnf_nf_name);
	rc = xnf_options_parse(table, kept, argv, &opt, given, text, &defaults);
	if (rc > 0)
		return 0;
	if (!opt.mode)
		opt.mode = xnf_find_mode("xdp");
	if (rc < 0 || check_run_options(&opt, table, given))
		return EXIT_USAGE;
	if (geteuid() != 0) {
		xnf_error("xnf doctor reads other namespaces' interfaces: run it as root");
		return 1;
	}
	return doctor_ports(&opt, json);
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

static const char *const worker_waits[] = {
	[XNF_WAIT_BUSY] = "spin", [XNF_WAIT_SYSCALL] = "syscall", [XNF_WAIT_POLL] = "poll",
};

static const char *hook_name(enum xnf_kernel_hook hook)
{
	return hook == XNF_AT_TC ? "tc" : "xdp";
}

static const char *const datapath_names[] = {
	[XNF_DATAPATH_KERNEL] = "kernel", [XNF_DATAPATH_USER] = "user", [XNF_DATAPATH_HYBRID] = "hybrid",
	[XNF_DATAPATH_SPLIT] = "split",
};

static void describe_strings(const char *const *strings, size_t n)
{
	putchar('[');
	for (size_t i = 0; i < n && strings[i]; i++) {
		printf("%s", i ? ", " : "");
		xnf_json_string(stdout, strings[i]);
	}
	putchar(']');
}

static void describe_fields(const struct xnf_stat_field *first, const struct xnf_stat_field *then)
{
	size_t n = 0;

	putchar('[');
	for (const struct xnf_stat_field *f = first; f->name; f++)
		printf("%s\"%s\"", n++ ? ", " : "", f->name);
	for (const struct xnf_stat_field *f = then; f->name; f++)
		printf("%s\"%s\"", n++ ? ", " : "", f->name);
	putchar(']');
}

/* The kernel facilities a mode or transmit path cannot run without, by the table's names (the tc hook: clsact,
 * which it takes where TCX is refused). */
static void describe_needs(unsigned needs)
{
	size_t n = 0;

	putchar('[');
	for (int f = 0; f < XNF_NFACILITIES; f++) {
		if (needs & XNF_NEEDS(f))
			printf("%s\"%s\"", n++ ? ", " : "", xnf_facility((enum xnf_facility)f)->name);
	}
	putchar(']');
}

static void describe_modes(void)
{
	printf("[");
	for (size_t i = 0; i < xnf_nmodes; i++) {
		const struct mode_info *m = &xnf_modes[i];

		printf("%s{\"name\": ", i ? ", " : "");
		xnf_json_string(stdout, m->name);
		printf(", \"summary\": ");
		xnf_json_string(stdout, m->summary);
		printf(", \"datapath\": \"%s\", \"sockets\": %s, \"workers\": ", datapath_names[m->datapath],
		       m->sockets ? "true" : "false");
		/* How the AF_XDP workers wait for frames: the lab's cost model reads who spins from here. */
		if (m->sockets)
			printf("\"%s\"", worker_waits[m->wait]);
		else
			printf("null");
		printf(", \"hook\": \"%s\", \"generic\": %s", hook_name(m->hook),
		       m->generic ? "true" : "false");
		printf(", \"available\": %s", m->available ? "true" : "false");
		printf(", \"keeps_state\": %s, \"workers_send\": %s, \"needs\": ", xnf_mode_keeps_state(m) ? "true" : "false",
		       xnf_mode_workers_send(m) ? "true" : "false");
		describe_needs(m->needs | (m->hook == XNF_AT_TC ? XNF_NEEDS(XNF_KF_CLSACT) : 0));
		putchar('}');
	}
	printf("]");
}

/* A rules table's second generation (xnf/rules_tables.h): the table is listed once, by its first name. */
static bool is_second_generation(const char *name)
{
	size_t len = strlen(name), suffix = strlen(XNF_RULES_SECOND_GENERATION_SUFFIX);

	return len > suffix && strcmp(name + len - suffix, XNF_RULES_SECOND_GENERATION_SUFFIX) == 0;
}

static void describe_maps(void)
{
	printf("{");
	for (size_t i = 0, shown = 0; xnf_native_map_at(i); i++) {
		const struct xnf_map *map = xnf_native_map_at(i);

		if (xnf_map_is_glue(map->name) || is_second_generation(map->name))
			continue;
		printf("%s\"%s\": %u", shown++ ? ", " : "", map->name, map->max_entries);
	}
	printf("}");
}

/* The options tagged tag: those only the modes with sockets take, or only one hook's; what a move out of them
 * leaves behind. */
static void describe_tagged_options(const struct xnf_option *table, int tag)
{
	size_t n = 0;

	putchar('[');
	for (size_t i = 0; table[i].name; i++) {
		if (table[i].id == tag)
			printf("%s\"--%s\"", n++ ? ", " : "", table[i].name);
	}
	putchar(']');
}

/* What the NF binary is and takes, for the Python CLI and for people: one JSON object. */
static int cmd_describe(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--json"))) {
		xnf_error("describe takes no arguments but --json (its output is JSON either way)");
		return EXIT_USAGE;
	}
	option_table();
	printf("{\"nf\": ");
	xnf_json_string(stdout, xnf_nf_name);
	printf(", \"rules_syntax\": ");
	xnf_json_string(stdout, xnf_nf_rules ? xnf_nf_rules->syntax : "");
	printf(", \"counters\": ");
	describe_strings(xnf_nf_counter_names, (size_t)-1);
	printf(", \"maps\": ");
	describe_maps();
	printf(", \"conntrack_tables\": ");
	xnf_ct_tables_json(stdout);
	/* How a rules table's generation in force is found among kept maps (xnf/rules_tables.h). */
	printf(", \"rules_generations\": {\"in_force\": \"%s\", \"second_suffix\": \"%s\"}",
	       XNF_RULES_GENERATION_MAP_NAME, XNF_RULES_SECOND_GENERATION_SUFFIX);
	/* Whether --offload-drops can move some of its drops into XDP: the advisor proposes it only then. */
	printf(", \"drop_rules\": %s", xnf_nf_drop_rules ? "true" : "false");
	printf(", \"modes\": ");
	describe_modes();
	printf(", \"options\": ");
	xnf_options_describe(stdout, option_table(), &defaults);
	printf(", \"socket_options\": ");
	describe_tagged_options(option_table(), TAG_AFXDP);
	printf(", \"hook_options\": {\"%s\": ", hook_name(XNF_AT_TC));
	describe_tagged_options(option_table(), TAG_AT_TC);
	putchar('}');
	printf(", \"stats\": {\"verdicts\": ");
	describe_strings(xnf_stat_names, XNF_STAT_NSLOTS);
	printf(", \"worker\": ");
	describe_fields(xnf_worker_stat_fields, xnf_socket_stat_fields);
	printf("}, \"tx_paths\": ");
	describe_strings(xnf_tx_path_names, (size_t)-1);
	printf(", \"tx_path_needs\": {\"%s\": ", xnf_tx_path_name(XNF_TX_LIVE));
	describe_needs(XNF_NEEDS(XNF_KF_LIVE_FRAMES));
	putchar('}');
	printf(", \"state_folder\": [\"%s\", \"%s\", \"%s\"]", XNF_STATE_LAYOUT, XNF_STATE_MAPS, XNF_STATE_LINKS);
	printf(", \"capture_sides\": ");
	describe_strings(capture_side_names, (size_t)-1);
	printf(", \"limits\": {\"ports\": %d, \"queues\": %d, \"workers\": %d, \"nf_counters\": %d, "
	       "\"chain_members\": %d, \"map_sizes\": %d, \"rule_text\": %d, \"rule_line\": %d, "
	       "\"control_request\": %d, \"name\": %d}}\n",
	       XNF_MAX_PORTS, XNF_MAX_QUEUES, XNF_MAX_WORKERS, XNF_MAX_NF_COUNTERS, XNF_CHAIN_MAX_MEMBERS,
	       XNF_MAX_MAP_SIZES, XNF_RULE_MAX_TEXT, XNF_RULE_MAX_LINE, XNF_CONTROL_REQUEST_MAX, XNF_MAX_NAME);
	return 0;
}

#define COST(field) offsetof(struct cost_options, field)

static const struct xnf_option cost_options_table[] = {
	{ .name = "frames", .kind = XNF_OPT_STRING, .value = "FILE", .offset = COST(frames),
	  .help = "the frames to run the NF on (pcap; xnf-gen --write-pcap makes a mix's)" },
	{ .name = "rules", .short_name = 'r', .kind = XNF_OPT_STRING, .value = "FILE", .offset = COST(run.rules),
	  .help = "rules loaded on both sides first" },
	{ .name = "map-size", .kind = XNF_OPT_CUSTOM, .value = "MAP=N", .repeat = true, .parse = take_map_size,
	  .help = "give one of the NF's maps N entries (K, M, G: times 1024, 1024^2, 1024^3)" },
	{ .name = "repeat", .kind = XNF_OPT_UINT, .value = "N", .offset = COST(repeat), .min = 1, .max = 1000000,
	  .help = "timed passes over the frames on each side" },
	XNF_OPTIONS_END,
};

static int cmd_cost(int argc, char **argv)
{
	/* The run's defaults too: the native side copies frames into a worker's UMEM as it would be sized. */
	static const struct cost_options cost_defaults = { .run = defaults, .repeat = 100 };
	struct cost_options opt = cost_defaults;
	char text[128];
	int rc;

	snprintf(text, sizeof(text), "usage: xnf-%s cost --frames FILE.pcap [--rules FILE] [--repeat N]", xnf_nf_name);
	rc = xnf_options_parse(cost_options_table, argc, argv, &opt, NULL, text, &cost_defaults);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	if (!opt.frames) {
		xnf_error("--frames is required: a pcap of the frames to measure on (see --help)");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		xnf_error("xnf-%s cost loads the NF's XDP program: run it as root", xnf_nf_name);
		return 1;
	}
	return xnf_cost_run(&opt);
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
	if (strcmp(argv[1], "check-run") == 0)
		return cmd_check_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "describe") == 0)
		return cmd_describe(argc - 1, argv + 1);
	if (strcmp(argv[1], "cost") == 0)
		return cmd_cost(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0) {
		xnf_print_version();
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	xnf_error("unknown command '%s': use run, doctor, check-rules, check-run, describe or cost", argv[1]);
	return EXIT_USAGE;
}
