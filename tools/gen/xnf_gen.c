// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-gen: a traffic generator built on BPF_PROG_RUN with live frames: the
 * kernel builds and transmits the frames itself, so one core puts out millions
 * of packets per second. On a kernel that refuses live frames the same program
 * runs at the loopback's tc egress and makes each seed frame into many
 * (tc_sender.h); frames longer than a page go out through a packet socket, their
 * headers built by the same program (socket_sender.h). One pinned thread per core
 * asked for; every frame carries a probe (flow, sequence number, send time)
 * that the receiver, attached with --rx-iface where the traffic comes back,
 * turns into loss, reordering and one-way latency.
 *
 *   xnf-gen --iface IF --dst-mac MAC [--rx-iface IF] [--rate PPS] [--duration S | --count N] ...
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xnf/helpers.h>
#include <xnf/rules_text.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/port_checks.h>

#include "classes.h"
#include "frame.h"
#include "pcap_out.h"
#include "iface_stats.h"
#include "gen.skel.h"
#include "probe.h"
#include "receiver.h"
#include "socket_sender.h"
#include "tc_sender.h"

#define FCS_LEN 4
/* The simple IMIX: 7 frames of 64 bytes, 4 of 594 (a 576-byte IP packet), 1 of 1,518, on the wire with FCS. */
#define IMIX_SIZES 3
static const __u32 imix_size[IMIX_SIZES] = { 64, 594, 1518 };
static const __u32 imix_weight[IMIX_SIZES] = { 7, 4, 1 };
#define DEFAULT_BATCH 64
/* A running call cannot be interrupted: this bounds how late a stop or a deadline is
 * honoured. (Without the dispatcher hold, see hold_in_dispatcher(), each call
 * would also wait for an RCU grace period and want to be much longer.) */
#define DEFAULT_CALL_MS 100
/* The wait for frames still coming back: sampled this often, for at most this many times --drain-ms. */
#define DRAIN_SAMPLE_MS 10
#define DRAIN_LIMIT 10
/* With a target rate, frames go out in bursts this long apart, each at line rate. */
#define PACING_SLICE_NS 1000000ull
/* A paced thread that falls further behind than this (it was not scheduled) shifts its schedule rather
 * than catch up in one burst: a burst is not the offered rate. The count stays exact; the run is longer. */
#define PACING_MAX_LAG_NS 5000000ull
#define FIRST_CALL_REPEAT 65536u

enum { SENDER_AUTO, SENDER_LIVE, SENDER_TC, SENDER_SOCKET };
static const char *const senders[] = { [SENDER_AUTO] = "auto", [SENDER_LIVE] = "live", [SENDER_TC] = "tc",
				       [SENDER_SOCKET] = "socket", NULL };

struct gen_options {
	const char *iface, *rx_iface;
	const char *write_pcap; /* --write-pcap: the frames go to this file instead of the interface */
	int ifindex;
	struct frame_spec frame;
	bool have_src_ip, have_dst_ip;
	bool imix;            /* --size imix: each class in the IMIX's three sizes */
	int sender;           /* index in senders; after planning, live, tc or socket */
	bool live_refused;    /* auto would have taken live frames, which the kernel refuses: said once the run starts */
	bool check_payload;   /* the receiver compares every payload byte */
	double duration_s;
	__u64 count;
	double rate;          /* frames per second, all threads together; 0: as fast as possible */
	__u32 flows;
	int flow_mode;        /* index in flow_modes */
	int proto;            /* index in protos */
	__u32 vary;
	struct xnf_core_list cores; /* one sender thread per core */
	__u32 batch;
	__u32 call_ms;
	__u32 drain_ms;
	__u32 stamp_every;    /* a power of two */
	const char *class_specs[XNF_GEN_MAX_CLASSES]; /* --class, as given: read once every other option is in */
	__u32 nclass_specs;
	struct gen_class classes[XNF_GEN_MAX_CLASSES]; /* without --class, one: the run's own options */
	__u32 nclasses;
	__u8 schedule[XNF_GEN_SCHEDULE];
};

struct gen_thread {
	pthread_t tid;
	int core;
	int prog_fd;
	const struct gen_options *opt;
	const __u8 *frame;        /* live frames: every frame starts as this one */
	__u32 frame_len;
	const struct socket_sender_class *socket_classes; /* the socket sender's */
	__u32 seed_count_offset;  /* the tc sender's: where in a seed its count goes */
	unsigned long long quota; /* frames to send, 0 for the duration */
	double rate;              /* this thread's share, 0 for unlimited */
	unsigned long long sent;
	__u64 refused;            /* the socket sender's frames the interface would not take */
	int error;
};

static atomic_bool stop_requested;

static void on_signal(int sig)
{
	atomic_store(&stop_requested, true);
}

static void sleep_until(__u64 ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int pin_to_core(int core)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* How many frames the next call sends: a pacing slice's worth, or what fills call_ms. */
static __u32 next_repeat(const struct gen_thread *t, __u32 last, __u64 took_ns, __u64 deadline)
{
	__u64 next;

	if (t->rate > 0) {
		next = (__u64)(t->rate * PACING_SLICE_NS / 1e9);
	} else if (took_ns == 0) {
		next = last;
	} else {
		next = (__u64)last * t->opt->call_ms * 1000000ull / took_ns;
		if (deadline) {
			__u64 now = xnf_now_ns(), left = deadline > now ? (__u64)last * (deadline - now) / took_ns : 1;

			if (left < next)
				next = left;
		}
	}
	if (next < 1)
		next = 1;
	if (t->quota && t->quota - t->sent < next)
		next = t->quota - t->sent;
	return next > (1u << 30) ? (1u << 30) : (__u32)next;
}

/* A thread's clock: when it started (moved on when it fell behind its pace), when it ends. */
struct send_clock {
	__u64 start, deadline, took;
	__u32 repeat;
};

static struct send_clock start_clock(const struct gen_thread *t)
{
	__u64 start = xnf_now_ns();

	/* Unpaced runs end at the deadline; counted and paced ones when their quota is sent. */
	return (struct send_clock){ .start = start, .deadline = t->quota ? 0 : start + (__u64)(t->opt->duration_s * 1e9),
				    .repeat = t->rate > 0 ? 1 : FIRST_CALL_REPEAT };
}

/* How many frames to send next, after waiting for their turn in a paced run; 0 when the thread is done. */
static __u32 next_turn(const struct gen_thread *t, struct send_clock *clock)
{
	if (atomic_load(&stop_requested) || (t->quota && t->sent >= t->quota) ||
	    (clock->deadline && xnf_now_ns() >= clock->deadline))
		return 0;
	clock->repeat = next_repeat(t, clock->repeat, clock->took, clock->deadline);
	if (t->rate > 0) {
		__u64 due = clock->start + (__u64)(t->sent / t->rate * 1e9), now = xnf_now_ns();

		if (now > due + PACING_MAX_LAG_NS)
			clock->start += now - due - PACING_MAX_LAG_NS;
		else
			sleep_until(due);
	}
	return clock->repeat;
}

static void send_live(struct gen_thread *t)
{
	struct xdp_md ctx = { .data_end = t->frame_len, .ingress_ifindex = (__u32)t->opt->ifindex };
	struct send_clock clock = start_clock(t);
	__u32 repeat;

	while ((repeat = next_turn(t, &clock))) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = t->frame, .data_size_in = t->frame_len,
			.ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = repeat,
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = t->opt->batch);
		__u64 begin = xnf_now_ns();

		if (bpf_prog_test_run_opts(t->prog_fd, &opts)) {
			t->error = errno;
			return;
		}
		t->sent += repeat;
		clock.took = xnf_now_ns() - begin;
	}
}

static void send_by_socket(struct gen_thread *t)
{
	const struct gen_options *opt = t->opt;
	struct socket_sender *s = malloc(sizeof(*s));
	struct send_clock clock = start_clock(t);
	__u32 repeat;

	if (!(t->rate > 0))
		clock.repeat = SOCKET_SENDER_BATCH; /* a first turn as short as a batch: the rate is far below live frames' */
	t->error = s ? socket_sender_open(s, opt->ifindex, t->prog_fd, t->socket_classes, opt->nclasses,
					  opt->schedule) : ENOMEM;
	while (!t->error && (repeat = next_turn(t, &clock))) {
		__u64 begin = xnf_now_ns();

		for (__u32 done = 0, n; !t->error && done < repeat; done += n) {
			n = repeat - done < SOCKET_SENDER_BATCH ? repeat - done : SOCKET_SENDER_BATCH;
			t->error = socket_sender_send(s, n, &t->refused);
			t->sent += t->error ? 0 : n;
		}
		clock.took = xnf_now_ns() - begin;
	}
	if (s)
		socket_sender_close(s);
	free(s);
}

/* Seeds through a packet socket, which the tc program turns into frames. */
static void send_by_tc(struct gen_thread *t)
{
	struct tc_sender *s = malloc(sizeof(*s));
	struct send_clock clock = start_clock(t);
	__u32 repeat;

	t->error = s ? tc_sender_open(s, t->frame, t->frame_len, t->seed_count_offset) : ENOMEM;
	while (!t->error && (repeat = next_turn(t, &clock))) {
		__u64 begin = xnf_now_ns();

		t->error = tc_sender_send(s, repeat);
		t->sent += t->error ? 0 : repeat;
		clock.took = xnf_now_ns() - begin;
	}
	if (s)
		tc_sender_close(s);
	free(s);
}

static void *send_loop(void *arg)
{
	struct gen_thread *t = arg;

	if (pin_to_core(t->core)) {
		t->error = EINVAL;
		return NULL;
	}
	if (t->opt->sender == SENDER_SOCKET)
		send_by_socket(t);
	else if (t->opt->sender == SENDER_TC)
		send_by_tc(t);
	else
		send_live(t);
	return NULL;
}

/*
 * Keeps the program attached (generic XDP, bpf_link) to this namespace's
 * loopback for the run, so it stays in the XDP dispatcher and each
 * BPF_PROG_RUN call skips the dispatcher rebuild and its RCU wait (3.0 ->
 * 6.7 Mpps with 50 ms calls here). Returns the link fd, or -1 with a warning:
 * the generator still works, with slower short calls.
 */
static int hold_in_dispatcher(int prog_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_SKB_MODE);
	int lo = (int)if_nametoindex("lo");
	int fd = lo ? bpf_link_create(prog_fd, lo, BPF_XDP, &opts) : -ENODEV;

	if (fd < 0)
		xnf_warn("cannot keep the generator's program attached to lo (%s): calls shorter than ~1 s "
			 "will lose time waiting for RCU", strerror(-fd));
	return fd;
}

/* Which CPU's frames belong to which thread: a flow is only ever built on its owner's CPU. */
static int assign_cpus(struct gen_bpf *skel, const struct gen_options *opt)
{
	int ncpus = libbpf_num_possible_cpus();
	struct xnf_gen_cpu *values = calloc(ncpus, sizeof(*values));
	__u32 zero = 0;
	int err;

	if (!values)
		return -ENOMEM;
	for (int c = 0; c < ncpus; c++)
		values[c].nthreads = opt->cores.count;
	for (__u32 i = 0; i < opt->cores.count; i++)
		values[opt->cores.cores[i]].thread = (__u32)i;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.gen_cpu), &zero, values, BPF_ANY);
	free(values);
	return err;
}

static __u64 *sent_per_flow(struct gen_bpf *skel, __u32 flows)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.gen_seq);
	__u64 *sent = calloc(flows, sizeof(*sent));
	__u64 *per_cpu = calloc(ncpus, sizeof(*per_cpu)); /* per-CPU values come 8-byte aligned */

	for (__u32 flow = 0; sent && per_cpu && flow < flows; flow++) {
		if (bpf_map_lookup_elem(fd, &flow, per_cpu))
			continue;
		for (int c = 0; c < ncpus; c++)
			sent[flow] += per_cpu[c];
	}
	free(per_cpu);
	return sent;
}

/* ---------------------------------------------------------------- options */

static int parse_mac(const char *text, __u8 *mac)
{
	char unused[128];

	return xnf_rules_parse_mac(text, mac, unused, sizeof(unused)); /* the caller names the option */
}

static int parse_vary(const char *text, __u32 *vary)
{
	static const struct { const char *name; __u32 bit; } fields[] = {
		{ "sport", XNF_VARY_SPORT }, { "dport", XNF_VARY_DPORT },
		{ "saddr", XNF_VARY_SADDR }, { "daddr", XNF_VARY_DADDR },
	};
	char copy[128], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", text);
	*vary = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && strcmp(tok, fields[i].name); i++)
			;
		if (i == sizeof(fields) / sizeof(fields[0])) {
			xnf_error("--vary: unknown field '%s': use sport, dport, saddr, daddr", tok);
			return -1;
		}
		*vary |= fields[i].bit;
	}
	return 0;
}

static int parse_ip(const char *text, struct gen_options *opt, bool source)
{
	int prefix_len;

	if (gen_parse_addr(source ? "--src-ip" : "--dst-ip", text, &opt->frame, source, &prefix_len))
		return -1;
	if (prefix_len >= 0) {
		xnf_error("--%s takes one address: a class of flows over a prefix is --class NAME:%s=%s,share=...",
			  source ? "src-ip" : "dst-ip", source ? "saddr" : "daddr", text);
		return -1;
	}
	*(source ? &opt->have_src_ip : &opt->have_dst_ip) = true;
	return 0;
}

/* The interface's tx queues as sysfs lists them; 0 where it cannot be read. */
static int tx_queue_count(const char *iface)
{
	char path[128];
	int queues = 0;

	for (;; queues++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/tx-%d", iface, queues);
		if (access(path, F_OK))
			return queues;
	}
}

/* Threads beyond the interface's tx queues share a veth ring: besides the refusals it counts, the
 * kernel then loses a few frames on the way in that no counter shows. */
static void warn_if_queues_short(const struct gen_options *opt)
{
	int queues = tx_queue_count(opt->iface);

	if (queues && opt->cores.count > (__u32)queues)
		xnf_warn("%u sender threads on %s with %d tx queue%s: threads sharing a queue overflow it, and a few "
			 "frames are then lost without a counter; give the interface one queue per thread",
			 opt->cores.count, opt->iface, queues, queues == 1 ? "" : "s");
}

static int check_options(struct gen_options *opt)
{
	__u32 min;

	if (!opt->iface) {
		xnf_error("--iface and --dst-mac are required (see --help)");
		return -1;
	}
	opt->ifindex = (int)if_nametoindex(opt->iface);
	if (!opt->ifindex) {
		xnf_error("interface '%s' does not exist in this network namespace", opt->iface);
		return -1;
	}
	/* Checked here too, where the receiver looks it up: a wrong name is refused before anything is said or loaded. */
	if (opt->rx_iface && !if_nametoindex(opt->rx_iface)) {
		xnf_error("receive interface '%s' does not exist in this network namespace", opt->rx_iface);
		return -1;
	}
	if (!opt->have_src_ip)
		parse_ip(opt->frame.ipv6 ? "2001:2::1" : "198.18.0.1", opt, true);
	if (!opt->have_dst_ip)
		parse_ip(opt->frame.ipv6 ? "2001:2::2" : "198.18.0.2", opt, false);
	if (!gen_spec_one_family(&opt->frame)) {
		xnf_error("source and destination addresses must both be IPv4 or both IPv6");
		return -1;
	}
	min = frame_min_size(&opt->frame);
	if (!opt->frame.size)
		opt->frame.size = min;
	if (opt->frame.size < min || opt->frame.size > XNF_GEN_MAX_FRAME) {
		xnf_error("frame size %u: %s/%s frames with xnf's probe take %u to %d bytes", opt->frame.size,
			  opt->frame.ipv6 ? "IPv6" : "IPv4", opt->frame.tcp ? "TCP" : "UDP", min, XNF_GEN_MAX_FRAME);
		return -1;
	}
	if (opt->duration_s <= 0 && !opt->count) {
		xnf_error("give a positive --duration or --count");
		return -1;
	}
	if (opt->stamp_every & (opt->stamp_every - 1)) {
		xnf_error("--stamp-every %u: give a power of two from 1 to 65536", opt->stamp_every);
		return -1;
	}
	if (opt->write_pcap && (!opt->count || opt->rx_iface || opt->cores.count != 1)) {
		xnf_error("--write-pcap writes --count frames built on one core: give --count, and neither --rx-iface "
			  "nor more than one core");
		return -1;
	}
	if (opt->count)
		opt->duration_s = 0;
	return 0;
}

static const char *const protos[] = { "udp", "tcp", "tcp-syn", NULL };
enum { FLOW_SEQ, FLOW_RANDOM };
static const char *const flow_modes[] = { [FLOW_SEQ] = "seq", [FLOW_RANDOM] = "random", NULL };

static int take_mac(const struct xnf_option *o, const char *text, void *opts)
{
	if (parse_mac(text, (__u8 *)opts + o->offset) == 0)
		return 0;
	xnf_error("--%s takes a MAC address like 02:00:00:00:00:02, not '%s'", o->name, text);
	return -1;
}

static int take_ip(const struct xnf_option *o, const char *text, void *opts)
{
	return parse_ip(text, opts, strcmp(o->name, "src-ip") == 0);
}

static int take_vlan(const struct xnf_option *o, const char *text, void *opts)
{
	(void)o;
	return frame_parse_vlans("--vlan", text, &((struct gen_options *)opts)->frame);
}

static int take_port(const struct xnf_option *o, const char *text, void *opts)
{
	__u32 port;

	if (xnf_parse_uint(o->name, text, 0, 65535, &port))
		return -1;
	*(__u16 *)((char *)opts + o->offset) = (__u16)port;
	return 0;
}

static int take_vary(const struct xnf_option *o, const char *text, void *opts)
{
	return parse_vary(text, &((struct gen_options *)opts)->vary);
}

static int take_size(const struct xnf_option *o, const char *text, void *opts)
{
	struct gen_options *opt = opts;

	/* The last --size given holds, as for every option. */
	opt->imix = strcmp(text, "imix") == 0;
	if (opt->imix)
		return 0;
	if (!*text || strspn(text, "0123456789") != strlen(text)) {
		xnf_error("--%s takes a frame size from 1 to %d bytes, or imix, not '%s'", o->name, XNF_GEN_MAX_FRAME,
			  text);
		return -1;
	}
	return xnf_parse_uint(o->name, text, 1, XNF_GEN_MAX_FRAME, &opt->frame.size);
}

static int take_class(const struct xnf_option *o, const char *text, void *opts)
{
	struct gen_options *opt = opts;

	if (opt->nclass_specs == XNF_GEN_MAX_CLASSES) {
		xnf_error("--class: at most %d classes", XNF_GEN_MAX_CLASSES);
		return -1;
	}
	opt->class_specs[opt->nclass_specs++] = text;
	return 0;
}

#define GEN(field) offsetof(struct gen_options, field)

static const struct xnf_option gen_table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = GEN(iface),
	  .help = "interface to send on (on veth its peer needs an XDP program or GRO)" },
	{ .name = "dst-mac", .kind = XNF_OPT_CUSTOM, .value = "MAC", .offset = GEN(frame.dst_mac), .parse = take_mac,
	  .help = "destination MAC (the device under test)" },
	{ .name = "src-mac", .kind = XNF_OPT_CUSTOM, .value = "MAC", .offset = GEN(frame.src_mac), .parse = take_mac,
	  .help = "source MAC", .default_text = "the interface's" },
	{ .name = "src-ip", .kind = XNF_OPT_CUSTOM, .value = "ADDR", .parse = take_ip,
	  .help = "source address, IPv4 or IPv6", .default_text = "198.18.0.1, or 2001:2::1 with --ipv6" },
	{ .name = "dst-ip", .kind = XNF_OPT_CUSTOM, .value = "ADDR", .parse = take_ip,
	  .help = "destination address, IPv4 or IPv6", .default_text = "198.18.0.2, or 2001:2::2 with --ipv6" },
	{ .name = "ipv6", .kind = XNF_OPT_FLAG, .offset = GEN(frame.ipv6), .help = "IPv6 with the default addresses" },
	{ .name = "proto", .kind = XNF_OPT_CHOICE, .value = "PROTO", .choices = protos, .offset = GEN(proto),
	  .help = "L4 protocol (tcp: ACK segments; tcp-syn: SYNs, each flow a connection's first)" },
	{ .name = "sport", .kind = XNF_OPT_CUSTOM, .value = "N", .offset = GEN(frame.sport), .parse = take_port,
	  .help = "base source port", .default_text = "9" },
	{ .name = "dport", .kind = XNF_OPT_CUSTOM, .value = "N", .offset = GEN(frame.dport), .parse = take_port,
	  .help = "base destination port", .default_text = "9" },
	{ .name = "vlan", .kind = XNF_OPT_CUSTOM, .value = "ID[.ID]", .parse = take_vlan, .default_text = "untagged",
	  .help = "802.1Q tag (ids 1-4094); OUTER.INNER sends QinQ: an 802.1ad S-tag, then the C-tag" },
	{ .name = "flows", .kind = XNF_OPT_UINT, .value = "N", .offset = GEN(flows), .min = 1,
	  .max = XNF_GEN_MAX_FLOWS, .help = "flows; --vary sets what differs between them" },
	{ .name = "vary", .kind = XNF_OPT_CUSTOM, .value = "LIST", .parse = take_vary, .default_text = "dport",
	  .help = "sport,dport,saddr,daddr: the fields that carry base + flow" },
	{ .name = "flow-mode", .kind = XNF_OPT_CHOICE, .value = "MODE", .choices = flow_modes,
	  .offset = GEN(flow_mode), .help = "flows in turn, or a random flow per frame" },
	{ .name = "class", .kind = XNF_OPT_CUSTOM, .value = "NAME:K=V,...", .parse = take_class, .repeat = true,
	  .help = "a traffic class with its share of the frames, on top of the options above:\n"
		  "share=F,saddr=ADDR[/LEN],daddr=ADDR[/LEN],sport=N,dport=N,proto=udp|tcp|tcp-syn,flows=N,\n"
		  "vary=sport+dport+...; a prefix spreads the class's flows over it. Shares add\n"
		  "up to 1; loss and latency are reported per class. vlan=ID[.ID] tags it (--vlan).\n"
		  "tunnel=gtpu,gnb=ADDR,upf=ADDR,\n"
		  "teid=N,qfi=N sends the class as GTP-U G-PDUs (vary=teid: a TEID per flow)",
	  .default_text = "one class: the options above" },
	{ .name = "size", .kind = XNF_OPT_CUSTOM, .value = "N|imix", .parse = take_size,
	  .help = "frame size on the wire with FCS, up to " XNF_STR(XNF_GEN_MAX_FRAME) " (a class's own: size=N);\n"
		  "imix: every class as the simple IMIX, 7 frames of 64 bytes to 4 of 594 and 1 of 1518,\n"
		  "each size a class of its own (NAME@SIZE) in the report",
	  .default_text = "the smallest that carries the probe, 64 for IPv4/UDP" },
	{ .name = "sender", .kind = XNF_OPT_CHOICE, .value = "HOW", .choices = senders, .offset = GEN(sender),
	  .help = "live: BPF_PROG_RUN live frames (frames up to a page);\n"
		  "tc: seeds through a packet socket, each made into up to " XNF_STR(XNF_GEN_FANOUT_MAX) " frames by the same\n"
		  "program at the loopback's tc egress (frames of one length up to a page);\n"
		  "socket: a packet socket, the headers built by the same program (any size, slower);\n"
		  "auto: live where the kernel runs live frames and every frame fits one, else tc\n"
		  "where it carries the run, else socket (each run's summary names its sender)" },
	{ .name = "check-payload", .kind = XNF_OPT_FLAG, .offset = GEN(check_payload),
	  .help = "the receiver compares every byte after the probe with what was sent and checks\n"
		  "the frame is as long as its IP header says (payload_checked, payload_wrong)" },
	{ .name = "rate", .kind = XNF_OPT_NUMBER, .value = "PPS", .offset = GEN(rate), .min = 0, .max = 1e12,
	  .help = "frames per second, all threads together, paced every 1 ms; 0: as fast as it goes" },
	{ .name = "duration", .kind = XNF_OPT_NUMBER, .value = "S", .offset = GEN(duration_s), .min = 0, .max = 1e7,
	  .help = "send for S seconds" },
	{ .name = "count", .kind = XNF_OPT_U64, .value = "N", .offset = GEN(count), .min = 1, .max = 1e15,
	  .help = "send exactly N frames (split over the threads) instead", .default_text = "none" },
	{ .name = "cores", .kind = XNF_OPT_CORES, .value = "LIST", .offset = GEN(cores), .default_text = "0",
	  .help = "one pinned sender thread per core, e.g. 0 or 0,1" },
	{ .name = "rx-iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = GEN(rx_iface),
	  .help = "attach the receiver here and report loss, reordering, latency" },
	{ .name = "drain-ms", .kind = XNF_OPT_UINT, .value = "N", .offset = GEN(drain_ms), .min = 0, .max = 60000,
	  .help = "after sending, wait until nothing has come back for N ms (at most " XNF_STR(DRAIN_LIMIT)
		  " N) before reading the receiver" },
	{ .name = "batch", .kind = XNF_OPT_UINT, .value = "N", .offset = GEN(batch), .min = 1, .max = 256,
	  .help = "frames per kernel round" },
	{ .name = "call-ms", .kind = XNF_OPT_UINT, .value = "N", .offset = GEN(call_ms), .min = 1, .max = 5000,
	  .help = "length of one BPF_PROG_RUN call when unpaced" },
	{ .name = "stamp-every", .kind = XNF_OPT_UINT, .value = "N", .offset = GEN(stamp_every), .min = 1,
	  .max = 65536, .help = "put a send time in one frame of N (a power of two): reading the clock is the\n"
				"generator's dearest step; latency is then sampled" },
	{ .name = "write-pcap", .kind = XNF_OPT_STRING, .value = "FILE", .offset = GEN(write_pcap),
	  .help = "write the --count frames the run would send to FILE (pcap) instead of sending\n"
		  "them: a mix's representative frames (what xnf cost measures an NF on)" },
	{ .name = "describe", .kind = XNF_OPT_FLAG, .help = "print these options as JSON and exit" },
	XNF_OPTIONS_END,
};

static const struct gen_options gen_defaults = {
	.duration_s = 1.0, .flows = 1, .cores = { .cores = { 0 }, .count = 1 }, .batch = DEFAULT_BATCH,
	.call_ms = DEFAULT_CALL_MS, .drain_ms = 200, .stamp_every = 1, .frame = { .sport = 9, .dport = 9 },
};

/* The classes as given: each --class on top of the run's own options, or those options as the one class. */
static int parse_classes(const struct gen_options *opt, struct gen_class *given, __u32 *n)
{
	struct gen_class base = { .name = "all", .share = 1.0, .frame = opt->frame, .flows = opt->flows,
				  .vary = opt->vary };

	*n = opt->nclass_specs ? opt->nclass_specs : 1;
	if (!opt->nclass_specs)
		given[0] = base;
	for (__u32 i = 0; i < opt->nclass_specs; i++) {
		if (gen_class_parse(opt->class_specs[i], &base, &given[i]))
			return -1;
	}
	return 0;
}

/* --size imix: each class as three, NAME@SIZE, sharing its share 7:4:1. */
static int expand_imix(struct gen_options *opt, const struct gen_class *given, __u32 n)
{
	__u32 weights = 0;

	for (__u32 k = 0; k < IMIX_SIZES; k++)
		weights += imix_weight[k];
	if (n * IMIX_SIZES > XNF_GEN_MAX_CLASSES) {
		xnf_error("--size imix makes three classes of each: at most %d classes with it", XNF_GEN_MAX_CLASSES / 3);
		return -1;
	}
	opt->nclasses = 0;
	for (__u32 i = 0; i < n; i++) {
		if (given[i].size_given) {
			xnf_error("--class %s: size= and --size imix both give its size: leave one out", given[i].name);
			return -1;
		}
		for (__u32 k = 0; k < IMIX_SIZES; k++) {
			struct gen_class *c = &opt->classes[opt->nclasses++];

			*c = given[i];
			if ((size_t)snprintf(c->name, sizeof(c->name), "%s@%u", given[i].name, imix_size[k]) >=
			    sizeof(c->name)) {
				xnf_error("--class %s: its name is too long for --size imix's NAME@SIZE (at most %d "
					  "characters)", given[i].name, XNF_GEN_CLASS_NAME - 6);
				return -1;
			}
			c->share = given[i].share * imix_weight[k] / weights;
			c->frame.size = imix_size[k];
			c->size_given = true;
		}
	}
	return 0;
}

/* The run's classes and each one's frame size: its own (size=, or the IMIX's), else the run's --size, else the
 * smallest that carries every class's headers and probe. */
static int plan_classes(struct gen_options *opt, bool size_given)
{
	struct gen_class given[XNF_GEN_MAX_CLASSES];
	__u32 n, common = 0;

	if (parse_classes(opt, given, &n))
		return -1;
	if (opt->imix) {
		if (expand_imix(opt, given, n))
			return -1;
	} else {
		memcpy(opt->classes, given, n * sizeof(given[0]));
		opt->nclasses = n;
	}
	if (gen_classes_plan(opt->classes, opt->nclasses, opt->schedule))
		return -1;
	for (__u32 i = 0; i < opt->nclasses; i++) {
		__u32 min = frame_min_size(&opt->classes[i].frame);

		common = min > common ? min : common;
	}
	for (__u32 i = 0; i < opt->nclasses; i++) {
		struct gen_class *c = &opt->classes[i];
		__u32 min = frame_min_size(&c->frame);

		c->frame.size = c->size_given ? c->frame.size : size_given ? opt->frame.size : common;
		if (c->frame.size < min) {
			xnf_error("frame size %u: class %s (%s/%s%s) takes at least %u bytes", c->frame.size, c->name,
				  c->frame.ipv6 ? "IPv6" : "IPv4", c->frame.tcp ? "TCP" : "UDP",
				  c->frame.gtpu ? " in GTP-U" : "", min);
			return -1;
		}
	}
	opt->frame.size = opt->classes[0].frame.size;
	return 0;
}

static __u32 longest_frame(const struct gen_options *opt)
{
	__u32 longest = 0;

	for (__u32 i = 0; i < opt->nclasses; i++)
		longest = opt->classes[i].frame.size > longest ? opt->classes[i].frame.size : longest;
	return longest;
}

/* Whether every frame of the run fits a live frame. */
static bool fits_live_frames(const struct gen_options *opt)
{
	return longest_frame(opt) - FCS_LEN <= XNF_LIVE_MAX_FRAME;
}

static bool lengths_differ(const struct gen_options *opt)
{
	for (__u32 i = 1; i < opt->nclasses; i++) {
		if (opt->classes[i].frame.size != opt->classes[0].frame.size)
			return true;
	}
	return false;
}

/* Whether the tc sender can carry the run: frames of one length that fit a page (a seed becomes each of them in turn),
 * and a kernel that lets its program run at the interface's egress. */
static bool tc_sender_carries(const struct gen_options *opt)
{
	return !lengths_differ(opt) && fits_live_frames(opt) &&
	       (xnf_kernel_has(XNF_KF_TCX) || xnf_kernel_has(XNF_KF_CLSACT)) &&
	       xnf_kernel_has_helper(BPF_FUNC_clone_redirect) && xnf_kernel_has_helper(BPF_FUNC_loop);
}

/* The sender auto takes: live frames where they carry the run and the kernel runs them (the facility table,
 * kernel.h), the tc sender where it carries the run, a packet socket otherwise. */
static int auto_sender(const struct gen_options *opt)
{
	bool live = xnf_kernel_has(XNF_KF_LIVE_FRAMES);

	if (fits_live_frames(opt) && live)
		return SENDER_LIVE;
	return tc_sender_carries(opt) ? SENDER_TC : SENDER_SOCKET;
}

/* A payload check needs every class's payload where the seed's lies, for live frames and the tc sender alike: both
 * start each frame from the longest class's. */
static int check_payload_sender(const struct gen_options *opt)
{
	__u32 header = frame_header_len(&opt->classes[0].frame);

	for (__u32 i = 1; opt->check_payload && opt->sender != SENDER_SOCKET && i < opt->nclasses; i++) {
		if (frame_header_len(&opt->classes[i].frame) != header) {
			xnf_error("--check-payload with --sender %s needs classes whose headers are as long: class %s's "
				  "are not class %s's; give --sender socket", senders[opt->sender], opt->classes[i].name,
				  opt->classes[0].name);
			return -1;
		}
	}
	return 0;
}

static int choose_sender(struct gen_options *opt)
{
	__u32 longest = longest_frame(opt);
	char why[512];

	if ((opt->sender == SENDER_LIVE || opt->sender == SENDER_TC) && !fits_live_frames(opt)) {
		xnf_error("frames of %u bytes are longer than %s (%d bytes with FCS): use --sender socket or auto",
			  longest, opt->sender == SENDER_LIVE ? "a live frame" : "--sender tc sends",
			  XNF_LIVE_MAX_FRAME + FCS_LEN);
		return -1;
	}
	if (opt->sender == SENDER_LIVE && !xnf_kernel_has(XNF_KF_LIVE_FRAMES)) {
		xnf_error("--sender live: %s: use --sender auto", xnf_kernel_refusal(XNF_KF_LIVE_FRAMES, why, sizeof(why)));
		return -1;
	}
	if (opt->sender == SENDER_TC && !tc_sender_carries(opt)) {
		xnf_error("--sender tc sends frames of one length from a tc program calling bpf_clone_redirect and "
			  "bpf_loop: %s; use --sender socket or auto", lengths_differ(opt) ? "the classes' lengths differ" :
			  "this kernel refuses one of them (xnf doctor lists what it gives)");
		return -1;
	}
	opt->live_refused = opt->sender == SENDER_AUTO && fits_live_frames(opt) && !opt->write_pcap &&
			    !xnf_kernel_has(XNF_KF_LIVE_FRAMES);
	if (opt->sender == SENDER_AUTO)
		opt->sender = auto_sender(opt);
	return check_payload_sender(opt);
}

static bool was_given(const bool *given, const char *name)
{
	for (size_t i = 0; gen_table[i].name; i++) {
		if (strcmp(gen_table[i].name, name) == 0)
			return given[i];
	}
	return false;
}

/* 0 to run, 1 after --help or --describe, -1 after an error. */
static int parse_args(int argc, char **argv, struct gen_options *opt)
{
	bool given[sizeof(gen_table) / sizeof(gen_table[0])] = { 0 };
	int rc = xnf_options_parse(gen_table, argc, argv, opt, given, "usage: xnf-gen --iface IF --dst-mac MAC [options]",
				   &gen_defaults);

	if (rc)
		return rc;
	if (was_given(given, "describe")) {
		xnf_options_describe(stdout, gen_table, &gen_defaults);
		putchar('\n');
		return 1;
	}
	if (!was_given(given, "dst-mac") || !opt->iface) {
		xnf_error("--iface and --dst-mac are required (see --help)");
		return -1;
	}
	if (opt->cores.count > XNF_GEN_MAX_THREADS) {
		xnf_error("--cores: at most %d sender threads", XNF_GEN_MAX_THREADS);
		return -1;
	}
	opt->frame.tcp = strncmp(protos[opt->proto], "tcp", 3) == 0;
	opt->frame.syn = strcmp(protos[opt->proto], "tcp-syn") == 0;
	if (!was_given(given, "vary") && opt->flows > 1)
		opt->vary = XNF_VARY_DPORT;
	if (check_options(opt))
		return -1;
	/* Before the classes copy the frame: a zero source address is dropped by any Linux bridge. */
	if (!was_given(given, "src-mac") && xnf_iface_mac(opt->iface, opt->frame.src_mac)) {
		xnf_error("cannot read the MAC address of %s: give --src-mac", opt->iface);
		return -1;
	}
	if (plan_classes(opt, was_given(given, "size") && !opt->imix) || choose_sender(opt))
		return -1;
	warn_if_queues_short(opt);
	return 0;
}

/* ---------------------------------------------------------------- run */

static struct xnf_gen_class class_config(const struct gen_class *c)
{
	const struct frame_spec *f = &c->frame;

	return (struct xnf_gen_class){
		.first_flow = c->first_flow, .flows = c->flows, .vary = c->vary, .ipv6 = f->ipv6, .tcp = f->tcp,
		.l4_csum = f->tcp || f->ipv6,
		.base_sport = f->sport, .base_dport = f->dport,
		.base_saddr_low = f->ipv6 ? (__u16)(f->src6[14] << 8 | f->src6[15]) : (__u16)ntohl(f->src4),
		.base_daddr_low = f->ipv6 ? (__u16)(f->dst6[14] << 8 | f->dst6[15]) : (__u16)ntohl(f->dst4),
		.encap = f->gtpu ? GTPU_ENCAP_LEN : 0, .base_teid = f->teid, .tags = f->nvlan * FRAME_VLAN_TAG_LEN,
		.frame_len = f->size - FCS_LEN,
	};
}

/* The classes' frames as sent, each its class's size; the first bytes of each are what the program restores. */
struct templates {
	__u8 frame[XNF_GEN_MAX_CLASSES][XNF_GEN_MAX_FRAME];
	__u32 len[XNF_GEN_MAX_CLASSES];  /* without FCS */
	__u32 longest;                   /* the class whose frame every live frame starts as */
};

/* Where a seed holds its count: the probe of the class whose frame it is, which every frame's build writes anew. */
static __u32 seed_count_offset(const struct gen_options *opt, const struct templates *templates)
{
	return frame_header_len(&opt->classes[templates->longest].frame);
}

static struct gen_bpf *load_generator(const struct gen_options *opt, const struct templates *templates)
{
	struct gen_bpf *skel = gen_bpf__open();
	size_t keep = sizeof(skel->rodata->template_words[0]);

	if (!skel)
		return NULL;
	skel->rodata->cfg.ifindex = (__u32)opt->ifindex;
	skel->rodata->cfg.random_flows = opt->flow_mode == FLOW_RANDOM;
	skel->rodata->cfg.stamp_mask = opt->stamp_every - 1;
	skel->rodata->cfg.nclasses = opt->nclasses;
	/* The socket sender's program builds headers into a short buffer: nothing to cut. */
	skel->rodata->cfg.fit_length = lengths_differ(opt) && (opt->sender == SENDER_LIVE || opt->write_pcap);
	memcpy((void *)skel->rodata->cfg.schedule, opt->schedule, sizeof(opt->schedule));
	for (__u32 i = 0; i < opt->nclasses; i++) {
		__u32 len = templates->len[i];

		skel->rodata->cfg.classes[i] = class_config(&opt->classes[i]);
		memcpy((void *)skel->rodata->template_words[i], templates->frame[i], len < keep ? len : keep);
	}
	skel->rodata->cfg.multi_buffer = opt->write_pcap && !fits_live_frames(opt);
	skel->rodata->cfg.seed_mark = tc_sender_mark();
	skel->rodata->cfg.seed_ifindex = if_nametoindex(TC_SENDER_SEED_IFACE);
	skel->rodata->cfg.tx_queues = (__u32)tx_queue_count(opt->iface);
	skel->rodata->cfg.seed_count_offset = seed_count_offset(opt, templates);
	/* The tc program only where it sends: a kernel without what it calls still runs the other senders. */
	bpf_program__set_autoload(skel->progs.xnf_gen_tc, opt->sender == SENDER_TC);
	if (skel->rodata->cfg.multi_buffer)
		bpf_program__set_flags(skel->progs.xnf_gen, bpf_program__flags(skel->progs.xnf_gen) | BPF_F_XDP_HAS_FRAGS);
	if (gen_bpf__load(skel) || assign_cpus(skel, opt)) {
		gen_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static void explain_run_error(int err, const struct gen_options *opt)
{
	const char *iface = opt->iface;

	if (opt->sender == SENDER_SOCKET && err == EMSGSIZE)
		xnf_error("%s's MTU does not carry frames of %u bytes: raise it to what they hold past the Ethernet "
			  "header, e.g. ip link set %s mtu %u", iface, longest_frame(opt), iface,
			  longest_frame(opt) - FCS_LEN - ETH_HLEN);
	else if (opt->sender == SENDER_SOCKET || opt->sender == SENDER_TC)
		xnf_error("sending on %s through a packet socket failed: %s", iface, strerror(err));
	else if (err == 524 /* ENOTSUPP */ || err == EOPNOTSUPP || err == EINVAL)
		xnf_error("the kernel refused to send live frames on %s (%s): on veth the peer interface needs an XDP "
			  "program or GRO", iface, strerror(err));
	else
		xnf_error("sending on %s failed: %s", iface, strerror(err));
}

/* --write-pcap: the run's frames built by the same program, one a call without live frames (the output is
 * kept), and written to the file instead of sent. On the run's one core: the flows are built per CPU. */
static int write_frames(int prog_fd, const struct gen_options *opt, const __u8 *frame, __u32 len)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = (__u32)opt->ifindex };
	struct pcap_out *out = pcap_out_open(opt->write_pcap);
	static __u8 built[XNF_GEN_MAX_FRAME];

	if (!out)
		return -1;
	for (__u64 i = 0; i < opt->count; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = len, .data_out = built,
			    .data_size_out = sizeof(built), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &run) || run.retval != XDP_TX) {
			xnf_error("building frame %llu failed: %s", (unsigned long long)i,
				  run.retval != XDP_TX ? "the generator's program did not build it" : strerror(errno));
			pcap_out_free(out);
			return -1;
		}
		if (pcap_out_write(out, built, run.data_size_out)) {
			pcap_out_free(out);
			return -1;
		}
	}
	return pcap_out_close(out);
}

/* A paced run offers exactly rate x duration frames, not whatever fits before the deadline. */
static unsigned long long total_frames(const struct gen_options *opt)
{
	if (opt->count)
		return opt->count;
	if (opt->rate > 0)
		return (unsigned long long)(opt->rate * opt->duration_s + 0.5);
	return 0;
}

static unsigned long long split(unsigned long long total, int parts, int i)
{
	return total / parts + (unsigned long long)(i < (int)(total % parts));
}

static int run_threads(const struct gen_options *opt, struct gen_bpf *skel, const struct templates *templates,
		       struct gen_thread *threads)
{
	static struct socket_sender_class socket_classes[XNF_GEN_MAX_CLASSES];
	int rc = 0;

	for (__u32 i = 0; i < opt->nclasses; i++)
		socket_classes[i] = (struct socket_sender_class){ .frame = templates->frame[i], .len = templates->len[i],
			.head_len = frame_header_len(&opt->classes[i].frame) + (__u32)sizeof(struct xnf_probe) };
	for (__u32 i = 0; i < opt->cores.count; i++) {
		struct gen_thread *t = &threads[i];

		t->core = opt->cores.cores[i];
		t->prog_fd = bpf_program__fd(skel->progs.xnf_gen);
		t->opt = opt;
		t->frame = templates->frame[templates->longest];
		t->frame_len = templates->len[templates->longest];
		t->socket_classes = socket_classes;
		t->seed_count_offset = seed_count_offset(opt, templates);
		t->quota = split(total_frames(opt), opt->cores.count, i);
		t->rate = opt->rate / opt->cores.count;
		pthread_create(&t->tid, NULL, send_loop, t);
	}
	for (__u32 i = 0; i < opt->cores.count; i++) {
		pthread_join(threads[i].tid, NULL);
		if (threads[i].error && !rc) {
			explain_run_error(threads[i].error, opt);
			rc = 1;
		}
	}
	return rc;
}

/* Frames the interface refused at send time (veth: its peer's ring was full); -1 if unknown. */
static long long send_errors(const char *ifname)
{
	return iface_stat_sum(ifname, "xdp_xmit_errors");
}

/* Frames still on their way back: the receiving interface's count is read until nothing has arrived for drain_ms, so
 * that a path slow to empty (a worker kept off its core) is waited for, up to DRAIN_LIMIT x drain_ms. An interface
 * without veth's per-queue XDP counters gets drain_ms flat. */
static void wait_for_returns(const struct gen_options *opt)
{
	long long last = iface_stat_sum(opt->rx_iface, "_xdp_packets"), now;
	__u64 quiet_ms = 0, waited_ms = 0;

	if (last < 0) {
		usleep(opt->drain_ms * 1000);
		return;
	}
	while (quiet_ms < opt->drain_ms && waited_ms < (__u64)DRAIN_LIMIT * opt->drain_ms) {
		usleep(DRAIN_SAMPLE_MS * 1000);
		waited_ms += DRAIN_SAMPLE_MS;
		now = iface_stat_sum(opt->rx_iface, "_xdp_packets");
		quiet_ms = now == last ? quiet_ms + DRAIN_SAMPLE_MS : 0;
		last = now;
	}
}

/* Frames the program really built on a core: a call may run it fewer times than it asked for. */
/* What the program did on a core: the frames it really built (a call may run it fewer times than it asked for), and
 * of them the tc sender's clones the interface refused. */
static struct xnf_gen_cpu done_on(struct gen_bpf *skel, int core)
{
	int ncpus = libbpf_num_possible_cpus();
	struct xnf_gen_cpu *values = calloc(ncpus, sizeof(*values)), done = { 0 };
	__u32 zero = 0;

	if (values && bpf_map_lookup_elem(bpf_map__fd(skel->maps.gen_cpu), &zero, values) == 0)
		done = values[core];
	free(values);
	return done;
}

static __u32 total_flows(const struct gen_options *opt)
{
	const struct gen_class *last = &opt->classes[opt->nclasses - 1];

	return last->first_flow + last->flows;
}

/* Per class: its share, flows and frames sent, and with the receiver its loss and latency. */
static void report_classes(const struct gen_options *opt, const __u64 *per_flow, const struct receiver *rx,
			   const struct receiver_class *rx_classes)
{
	printf(", \"classes\": [");
	for (__u32 i = 0; i < opt->nclasses; i++) {
		const struct gen_class *c = &opt->classes[i];
		__u64 sent = 0;

		for (__u32 f = c->first_flow; per_flow && f < c->first_flow + c->flows; f++)
			sent += per_flow[f];
		printf("%s{\"name\": \"%s\", \"size\": %u, \"share\": %.6f, \"flows\": %u, \"sent\": %llu", i ? ", " : "",
		       c->name, c->frame.size, (double)c->slots / XNF_GEN_SCHEDULE, c->flows, (unsigned long long)sent);
		if (rx->skel && per_flow) {
			printf(", ");
			receiver_class_report(rx, &rx_classes[i], i, per_flow, stdout);
		}
		printf("}");
	}
	printf("]");
}

/* Bytes on the wire (FCS included) of the frames that left: each class's frames at its size, the frames the
 * interface refused (not known per class) taken off in proportion. */
static double bytes_sent(const struct gen_options *opt, const __u64 *per_flow, unsigned long long built,
			 unsigned long long sent)
{
	double bytes = 0;

	for (__u32 i = 0; per_flow && i < opt->nclasses; i++) {
		const struct gen_class *c = &opt->classes[i];

		for (__u32 f = c->first_flow; f < c->first_flow + c->flows; f++)
			bytes += (double)per_flow[f] * c->frame.size;
	}
	return built ? bytes * sent / built : 0;
}

static void report(const struct gen_options *opt, const struct gen_thread *threads, double seconds,
		   struct gen_bpf *skel, const struct receiver *rx, const struct receiver_class *rx_classes,
		   long long errors)
{
	unsigned long long total = 0, requested = 0;
	__u64 *per_flow = sent_per_flow(skel, total_flows(opt));

	printf("{\"iface\": \"%s\", \"size\": %u, \"proto\": \"%s\", \"ipv6\": %s, \"flows\": %u, "
	       "\"sender\": \"%s\", \"rate_target\": %.0f, \"seconds\": %.6f, \"threads\": [",
	       opt->iface, opt->frame.size, opt->frame.tcp ? "tcp" : "udp", opt->frame.ipv6 ? "true" : "false",
	       total_flows(opt), senders[opt->sender], opt->rate, seconds);
	for (__u32 i = 0; i < opt->cores.count; i++) {
		unsigned long long built = done_on(skel, threads[i].core).next;

		printf("%s{\"core\": %d, \"requested\": %llu, \"built\": %llu}", i ? ", " : "", threads[i].core,
		       threads[i].sent, built);
		total += built;
		requested += threads[i].sent;
	}
	if (errors < 0 || (unsigned long long)errors > total)
		errors = 0; /* not a veth, or counters we cannot read: nothing known to subtract */
	/* requested: frames the calls asked for; built: what the program made (the kernel may make fewer
	 * when its frame pool runs dry); send_errors: refused by the interface; sent: what left. */
	printf("], \"requested\": %llu, \"built\": %llu, \"send_errors\": %lld, \"sent\": %llu, \"pps\": %.0f, "
	       "\"bps\": %.0f", requested, total, errors, total - (unsigned long long)errors,
	       (total - (unsigned long long)errors) / seconds,
	       8 * bytes_sent(opt, per_flow, total, total - (unsigned long long)errors) / seconds);
	if (rx->skel && per_flow) {
		printf(", ");
		receiver_report(rx, per_flow, total_flows(opt), (__u64)errors, stdout);
	}
	report_classes(opt, per_flow, rx, rx_classes);
	free(per_flow);
	printf("}\n");
}

int main(int argc, char **argv)
{
	struct gen_options opt = gen_defaults;
	static struct gen_thread threads[XNF_GEN_MAX_THREADS];
	static struct templates templates;
	struct receiver_class rx_classes[XNF_GEN_MAX_CLASSES];
	struct receiver rx = { .link_fd = -1 };
	struct tc_sender_hook hook;
	struct gen_bpf *skel;
	__u64 start;
	int rc, hold_fd;

	rc = parse_args(argc, argv, &opt);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (opt.live_refused)
		xnf_kernel_say_fallback(XNF_KF_LIVE_FRAMES);
	for (__u32 i = 0; i < opt.nclasses; i++) {
		templates.len[i] = frame_build(&opt.classes[i].frame, templates.frame[i]);
		if (templates.len[i] > templates.len[templates.longest])
			templates.longest = i;
		rx_classes[i] = (struct receiver_class){ opt.classes[i].first_flow, opt.classes[i].flows };
	}
	skel = load_generator(&opt, &templates);
	if (!skel) {
		xnf_error("cannot load the generator's BPF program: %s%s", strerror(errno),
			  geteuid() ? " (xnf-gen needs root)" : "");
		return 1;
	}
	if (opt.write_pcap) {
		rc = pin_to_core(opt.cores.cores[0]) ||
		     write_frames(bpf_program__fd(skel->progs.xnf_gen), &opt, templates.frame[templates.longest],
				  templates.len[templates.longest]);
		if (!rc)
			printf("{\"written\": %llu, \"file\": \"%s\", \"frames_per_cycle\": %llu}\n",
			       (unsigned long long)opt.count, opt.write_pcap,
			       gen_classes_frames_per_cycle(opt.classes, opt.nclasses));
		gen_bpf__destroy(skel);
		return rc ? 1 : 0;
	}
	if (opt.rx_iface && receiver_attach(&rx, opt.rx_iface, rx_classes, opt.nclasses, opt.check_payload)) {
		gen_bpf__destroy(skel);
		return 1;
	}
	if (opt.sender == SENDER_TC && (rc = tc_sender_hook(&hook, bpf_program__fd(skel->progs.xnf_gen_tc)))) {
		xnf_error("cannot put the tc sender's program at %s's egress: %s", TC_SENDER_SEED_IFACE, strerror(rc));
		receiver_detach(&rx);
		gen_bpf__destroy(skel);
		return 1;
	}
	hold_fd = hold_in_dispatcher(bpf_program__fd(skel->progs.xnf_gen));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	long long errors_before = send_errors(opt.iface);

	start = xnf_now_ns();
	rc = run_threads(&opt, skel, &templates, threads);
	double seconds = (xnf_now_ns() - start) / 1e9;

	if (rx.skel)
		wait_for_returns(&opt);
	long long errors_after = send_errors(opt.iface), refused = 0;

	for (__u32 i = 0; i < opt.cores.count; i++)
		refused += (long long)(threads[i].refused + done_on(skel, threads[i].core).refused);
	report(&opt, threads, seconds, skel, &rx, rx_classes,
	       (errors_before >= 0 && errors_after >= 0 ? errors_after - errors_before : 0) + refused);
	if (opt.sender == SENDER_TC)
		tc_sender_unhook(&hook);
	receiver_detach(&rx);
	if (hold_fd >= 0)
		close(hold_fd);
	gen_bpf__destroy(skel);
	return rc;
}
