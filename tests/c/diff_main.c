// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Differential test of one NF: every frame of a pcap goes through one of the NF's kernel builds (BPF_PROG_RUN:
 * the XDP object, or the tc object on an skb) and through its native build, with the same rules in both sides'
 * maps. Prints one JSON line per frame with both results and a summary line; the Python test asserts on them.
 *
 *   xnf-diff-<nf> CORPUS.pcap [--rules FILE] [--ports N] [--ignore-times] [--hook xdp|tc [--skb-csum-complete]]
 *
 * At tc the verdict is the counter that moved and the action tc returned, named as XDP's (TC_ACT_SHOT: drop or
 * abort, TC_ACT_UNSPEC, TCX's "next": pass, TC_ACT_REDIRECT: tx or redirect); --skb-csum-complete runs each skb as
 * CHECKSUM_COMPLETE, and the kernel checks after the program that the skb's sum still matches its bytes.
 *
 * Any pcap with Ethernet frames is taken (a capture of a real network too): each frame runs as long after the one
 * before as their time stamps say, at most 5 s (fixtures of idle times wait for them; a capture whose clock jumps by
 * days goes on; a stamp that goes back runs at once; --ignore-times runs them back to back), and
 * a record the harness cannot run (shorter than an Ethernet header, longer than MAX_FRAME) gets a line saying so
 * and is counted in the summary, never a silent stop.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/frame_bytes.h>
#include <xnf/helpers.h>
#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/stats.h>
#include <xnf/runtime/xdp_instance.h>

/* The longest frame either kernel hook carries (a multi-buffer XDP frame, a GSO segment): what the harness runs.
 * The XDP build runs a frame longer than the kernel's first buffer as a multi-buffer one, its program loaded to
 * take them as the modes that carry jumbo frames load it. */
#define MAX_FRAME 65536
/* The kernel's skb test run builds its skb in one page: what tc's build can run. */
#define TC_TEST_RUN_MAX 3600

struct side_result {
	int action;      /* XDP_* */
	int stat_slot;   /* which verdict counter moved */
	bool malformed;  /* the malformed counter moved too */
	int port;        /* native side, a redirect: the port it names (the kernel's is not observable here) */
	__u32 len;
	__u8 data[XNF_PKT_HEADROOM + MAX_FRAME]; /* a frame the NF grew in front comes out longer */
};

/* The XDP action each counter stands for, as xnf_xdp_action() in xdp_glue.h returns it. */
static const int slot_action[XNF_STAT_NSLOTS] = {
	[XNF_STAT_ABORT] = XDP_ABORTED, [XNF_STAT_DROP] = XDP_DROP, [XNF_STAT_PASS] = XDP_PASS,
	[XNF_STAT_TX] = XDP_TX, [XNF_STAT_REDIRECT] = XDP_REDIRECT, [XNF_STAT_REDIRECT_ERROR] = XDP_DROP,
	[XNF_STAT_LOCAL] = XDP_PASS, [XNF_STAT_NOT_READY] = XDP_DROP,
};

/* Applies a verdict the way the native runtime does (the same slots as the workers). */
static void native_apply(xnf_verdict v, __u32 nports, struct side_result *r)
{
	r->malformed = (v & XNF_REASON_MALFORMED) != 0;
	r->stat_slot = (int)xnf_verdict_slot(v, nports);
	r->port = XNF_VERDICT_ACTION(v) == XNF_REDIRECT_ACTION ? (int)XNF_VERDICT_PORT(v) : -1;
	r->action = slot_action[r->stat_slot];
}

/* How the kernel's XDP test run lays a long frame out, which the native side copies so that both builds see the
 * same first buffer: a page less XDP's headroom and the skb's shared info, then a page per further buffer. */
#define TEST_RUN_FIRST_BUFFER (4096 - XNF_PKT_HEADROOM - 320)
#define TEST_RUN_FRAG 4096

/* Splits the frame's bytes after the first buffer into frags, as the kernel's test run and an AF_XDP socket of
 * several descriptors hand them over: each in a buffer of its own. */
static void lay_out_frags(struct xnf_pkt *pkt, __u8 *rest, __u32 rest_len, struct xnf_frags *frags)
{
	frags->n = 0;
	for (__u32 at = 0; at < rest_len && frags->n < XNF_MAX_FRAGS; at += TEST_RUN_FRAG) {
		frags->frag[frags->n].data = rest + at;
		frags->frag[frags->n++].len = rest_len - at < TEST_RUN_FRAG ? rest_len - at : TEST_RUN_FRAG;
	}
	pkt->beyond = rest_len;
	pkt->frags = frags;
}


static void run_native(const __u8 *frame, __u32 len, __u32 nports, bool multi_buffer, struct side_result *r)
{
	static __u8 room[XNF_PKT_HEADROOM + MAX_FRAME], rest[MAX_FRAME];
	static struct xnf_frags frags;
	__u32 first = multi_buffer && len > TEST_RUN_FIRST_BUFFER ? TEST_RUN_FIRST_BUFFER : len;
	struct xnf_pkt pkt = { 0 };
	xnf_verdict v;

	/* As the runtime hands it over: with the headroom the kernel leaves in front. */
	memcpy(room + XNF_PKT_HEADROOM, frame, first);
	pkt.data = room + XNF_PKT_HEADROOM;
	pkt.data_end = room + XNF_PKT_HEADROOM + first;
	pkt.frame_start = room;
	if (first < len) {
		memcpy(rest, frame + first, len - first);
		lay_out_frags(&pkt, rest, len - first, &frags);
	}
	xnf_nf_run_batch(&pkt, &v, 1);
	native_apply(v, nports, r);
	/* The frame as the NF left it, its buffers joined. */
	r->len = xnf_frame_len(&pkt);
	xnf_frame_load(&pkt, 0, r->data, r->len);
}

#define TC_REFUSED "an IPv4 or IPv6 frame shorter than its IP header, which the kernel's skb test run refuses"
#define TC_TOO_LONG "longer than the kernel's skb test run takes (one page)"

/* Linux 6.10's BPF_F_TEST_SKB_CHECKSUM_COMPLETE, which bookworm's headers predate. */
#define XNF_TEST_SKB_CHECKSUM_COMPLETE (1U << 2)

/* tc's action as XDP's, by the counter that moved: -1 where the two do not fit together. */
static int tc_as_xdp_action(int tc_action, int slot)
{
	switch (tc_action) {
	case TC_ACT_SHOT:
		return slot == XNF_STAT_ABORT ? XDP_ABORTED : XDP_DROP;
	case TC_ACT_UNSPEC:
		return XDP_PASS;
	case TC_ACT_REDIRECT:
		return slot == XNF_STAT_TX ? XDP_TX : XDP_REDIRECT;
	default:
		return -1;
	}
}

static int run_kernel(const struct xnf_xdp_instance *x, const __u8 *frame, __u32 len, bool csum_complete,
		      struct side_result *r)
{
	struct xnf_counter before[XNF_STAT_NSLOTS], after[XNF_STAT_NSLOTS];
	struct __sk_buff skb = { .ingress_ifindex = 1, .ifindex = 1 };   /* the ports are lo (main) */
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame, .data_size_in = len,
		.data_out = r->data, .data_size_out = sizeof(r->data),
		.repeat = 1);
	int err;

	if (x->hook == XNF_AT_TC) {
		opts.ctx_in = &skb;
		opts.ctx_size_in = sizeof(skb);
		opts.flags = csum_complete ? XNF_TEST_SKB_CHECKSUM_COMPLETE : 0;
	}
	if (xnf_xdp_read_stats(x, before))
		return -1;
	err = bpf_prog_test_run_opts(x->prog_fd, &opts);
	if (err)
		return err;
	if (xnf_xdp_read_stats(x, after))
		return -1;
	r->action = (int)opts.retval;
	r->port = -1;
	r->len = opts.data_size_out;
	r->stat_slot = -1;
	r->malformed = after[XNF_STAT_MALFORMED].packets != before[XNF_STAT_MALFORMED].packets;
	for (int s = 0; s < XNF_STAT_NSLOTS; s++) {
		if (s != XNF_STAT_MALFORMED && after[s].packets != before[s].packets)
			r->stat_slot = s;
	}
	if (x->hook == XNF_AT_TC)
		r->action = tc_as_xdp_action(r->action, r->stat_slot);
	return 0;
}

static void print_hex(const __u8 *d, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		printf("%02x", d[i]);
}

/* One side's record: the action, the verdict counter that moved (by name), malformed, the redirect port, the bytes out. */
static void print_side(const struct side_result *r)
{
	const char *verdict = r->stat_slot >= 0 ? xnf_stat_names[r->stat_slot] : "none";

	printf("{\"action\": %d, \"slot\": %d, \"verdict\": \"%s\", \"malformed\": %s, \"port\": %d, \"out\": \"",
	       r->action, r->stat_slot, verdict, r->malformed ? "true" : "false", r->port);
	print_hex(r->data, r->len);
	printf("\"}");
}

struct pcap_reader {
	FILE *f;
	const char *path;
	bool swapped;
	bool nanoseconds;   /* time stamps' second field: ns (magic a1b23c4d) or us */
	__u32 index;
};

enum { RECORD_END = -1, RECORD_BROKEN = -2 };   /* a record of 0 bytes is a record */

#define ETH_HEADER 14
#define LINKTYPE_ETHERNET 1

static __u32 pcap_u32(const struct pcap_reader *p, __u32 v)
{
	return p->swapped ? __builtin_bswap32(v) : v;
}

static int pcap_open(struct pcap_reader *p, const char *path)
{
	__u32 header[6];

	p->path = path;
	p->index = 0;
	p->f = fopen(path, "rb");
	if (!p->f) {
		xnf_error("cannot open corpus %s: %s", path, strerror(errno));
		return -1;
	}
	if (fread(header, sizeof(header), 1, p->f) != 1) {
		xnf_error("%s is not a pcap file (shorter than its header)", path);
		return -1;
	}
	switch (header[0]) {
	case 0xa1b2c3d4: case 0xa1b23c4d: p->swapped = false; break;
	case 0xd4c3b2a1: case 0x4d3cb2a1: p->swapped = true; break;
	default:
		xnf_error("%s is not a pcap file (pcapng? convert it with editcap -F pcap)", path);
		return -1;
	}
	p->nanoseconds = header[0] == 0xa1b23c4d || header[0] == 0x4d3cb2a1;
	if ((pcap_u32(p, header[5]) & 0xffff) != LINKTYPE_ETHERNET) {
		xnf_error("%s holds link type %u: the harness takes Ethernet frames (link type 1)", path,
			  pcap_u32(p, header[5]) & 0xffff);
		return -1;
	}
	return 0;
}

/* Reads past len bytes of a record that is not run; false where the file ends first. */
static bool skip_bytes(FILE *f, __u32 len)
{
	__u8 scratch[4096];

	while (len) {
		size_t n = len < sizeof(scratch) ? len : sizeof(scratch);

		if (fread(scratch, 1, n, f) != n)
			return false;
		len -= (__u32)n;
	}
	return true;
}

/*
 * The next record: its captured length (which may be 0, or above cap: then nothing is read into buf and the
 * record is read past), RECORD_END at the end of the file, RECORD_BROKEN where the file ends inside
 * a record. *at: its time stamp in microseconds.
 */
static long pcap_next(struct pcap_reader *p, __u8 *buf, __u32 cap, __u64 *at)
{
	__u32 rec[4];
	size_t got = fread(rec, 1, sizeof(rec), p->f);
	__u32 len;

	if (got == 0)
		return RECORD_END;
	p->index++;
	if (got != sizeof(rec)) {
		xnf_error("%s: record %u is cut short in its header: the file ends inside it", p->path, p->index);
		return RECORD_BROKEN;
	}
	*at = (__u64)pcap_u32(p, rec[0]) * 1000000 + pcap_u32(p, rec[1]) / (p->nanoseconds ? 1000 : 1);
	len = pcap_u32(p, rec[2]);
	if (len <= cap ? fread(buf, 1, len, p->f) != len : !skip_bytes(p->f, len)) {
		xnf_error("%s: record %u (%u bytes) is cut short: the file ends inside it", p->path, p->index, len);
		return RECORD_BROKEN;
	}
	return len;
}

/* Why a record cannot run through both builds, or NULL. */
static const char *why_not_run(long len)
{
	static char why[96];

	if (len < ETH_HEADER)
		snprintf(why, sizeof(why), "shorter than an Ethernet header (the kernel's test run takes %d bytes or more)",
			 ETH_HEADER);
	else if (len > MAX_FRAME)
		snprintf(why, sizeof(why), "longer than the %d bytes the harness runs", MAX_FRAME);
	else
		return NULL;
	return why;
}

struct harness_options {
	const char *corpus;
	const char *rules;
	__u32 nports;
	bool ignore_times;
	enum xnf_kernel_hook hook;
	bool csum_complete;
};

static int parse_args(int argc, char **argv, struct harness_options *o)
{
	memset(o, 0, sizeof(*o));
	o->nports = 1;
	o->hook = XNF_AT_XDP;
	for (int i = 1; i < argc; i++) {
		bool value = i + 1 < argc;

		if (strcmp(argv[i], "--rules") == 0 && value)
			o->rules = argv[++i];
		else if (strcmp(argv[i], "--hook") == 0 && value && strcmp(argv[i + 1], "xdp") == 0)
			o->hook = XNF_AT_XDP, i++;
		else if (strcmp(argv[i], "--hook") == 0 && value && strcmp(argv[i + 1], "tc") == 0)
			o->hook = XNF_AT_TC, i++;
		else if (strcmp(argv[i], "--skb-csum-complete") == 0)
			o->csum_complete = true;
		else if (strcmp(argv[i], "--ignore-times") == 0)
			o->ignore_times = true;
		else if (strcmp(argv[i], "--ports") == 0 && value)
			o->nports = (__u32)atoi(argv[++i]);
		else if (!o->corpus)
			o->corpus = argv[i];
		else
			return -1;
	}
	return o->corpus && o->nports >= 1 && o->nports <= XNF_MAX_PORTS && (!o->csum_complete || o->hook == XNF_AT_TC)
		       ? 0 : -1;
}

static int load_rules_both(const char *path, struct xnf_xdp_instance *x)
{
	struct xnf_rules_target kernel = { .resolve = xnf_xdp_resolve_map, .ctx = x };
	struct xnf_rules_target native = { .resolve = xnf_native_resolve_map, .ctx = NULL };
	char err[1024];

	if (!path)
		return 0;
	if (xnf_rules_load_file(path, &kernel, err, sizeof(err)) < 0 ||
	    xnf_rules_load_file(path, &native, err, sizeof(err)) < 0) {
		xnf_error("%s", err);
		return -1;
	}
	return 0;
}

/* The longest wait between two frames: fixtures' idle times are seconds, while a capture's clock may jump forward
 * by days or years (tcpdump's kday4: 24 days). */
#define MAX_GAP_US (5ULL * 1000 * 1000)

/* Waits until the frame is due: as long after the frame before as its time stamp says, at most MAX_GAP_US (a stamp
 * that goes back runs at once). *due_us is when the frame before was due. */
static void wait_for(__u64 *due_us, __u64 *prev_at, __u64 at)
{
	__u64 gap = at > *prev_at ? at - *prev_at : 0;

	*due_us += gap < MAX_GAP_US ? gap : MAX_GAP_US;
	*prev_at = at;
	while (xnf_now_ns() / 1000 < *due_us)
		usleep((useconds_t)(*due_us - xnf_now_ns() / 1000));
}

int main(int argc, char **argv)
{
	static struct side_result kernel, native;
	static __u8 frame[MAX_FRAME];
	struct xnf_port ports[XNF_MAX_PORTS];
	struct xnf_xdp_instance x;
	struct pcap_reader pcap;
	struct harness_options o;
	const char *corpus, *rules;
	unsigned int total = 0, mismatches = 0, skipped = 0;
	__u64 due_us, at_us = 0, prev_at = 0;
	bool ignore_times;
	__u32 nports;
	long len;

	if (parse_args(argc, argv, &o)) {
		fprintf(stderr, "usage: %s CORPUS.pcap [--rules FILE] [--ports N] [--ignore-times] "
			"[--hook xdp|tc [--skb-csum-complete]]\n", argv[0]);
		return 2;
	}
	corpus = o.corpus;
	rules = o.rules;
	nports = o.nports;
	ignore_times = o.ignore_times;
	/* Ports only have to exist for the redirect map: loopback serves for all. */
	for (__u32 i = 0; i < nports; i++) {
		snprintf(ports[i].name, sizeof(ports[i].name), "lo");
		ports[i].ifindex = 1;
		xnf_cfg.ifindex[i] = 1;
	}
	xnf_cfg.nports = nports;
	if (xnf_native_maps_init(1)) {
		xnf_error("cannot create the native maps");
		return 1;
	}
	if (xnf_xdp_load(&x, ports, nports, false,
			 &(struct xnf_xdp_plan){ .datapath = XNF_DATAPATH_KERNEL, .hook = o.hook,
						 .frags = o.hook == XNF_AT_XDP },
			 NULL, 0) ||
	    load_rules_both(rules, &x) || pcap_open(&pcap, corpus))
		return 1;
	due_us = xnf_now_ns() / 1000;
	while ((len = pcap_next(&pcap, frame, sizeof(frame), &at_us)) != RECORD_END && len != RECORD_BROKEN) {
		const char *why = why_not_run(len);
		bool same;
		int err;

		if (total == 0)
			prev_at = at_us;
		if (why) {
			printf("{\"index\": %u, \"skipped\": \"%ld bytes: %s\"}\n", total++, len, why);
			skipped++;
			continue;
		}
		if (!ignore_times)
			wait_for(&due_us, &prev_at, at_us);
		err = run_kernel(&x, frame, (__u32)len, o.csum_complete, &kernel);

		run_native(frame, (__u32)len, nports, o.hook == XNF_AT_XDP, &native);
		if (err == -EINVAL && o.hook == XNF_AT_TC) {
			/* The kernel's skb test run pulls the IP header first (a real skb reaches tc without that),
			 * and takes a page at most. */
			printf("{\"index\": %u, \"skipped\": \"%ld bytes: %s\"}\n", total++, len,
			       len > TC_TEST_RUN_MAX ? TC_TOO_LONG : TC_REFUSED);
			skipped++;
			continue;
		}
		if (err) {
			printf("{\"index\": %u, \"kernel_error\": %d}\n", total++, err);
			mismatches++;
			continue;
		}
		same = kernel.action == native.action && kernel.stat_slot == native.stat_slot &&
		       kernel.malformed == native.malformed && kernel.len == native.len &&
		       memcmp(kernel.data, native.data, kernel.len) == 0;
		mismatches += !same;
		printf("{\"index\": %u, \"same\": %s, \"kernel\": ", total++, same ? "true" : "false");
		print_side(&kernel);
		printf(", \"native\": ");
		print_side(&native);
		printf("}\n");
	}
	printf("{\"summary\": {\"frames\": %u, \"mismatches\": %u, \"skipped\": %u}}\n", total, mismatches, skipped);
	if (skipped)
		xnf_info("%u of %u records not run (each says why in its line)", skipped, total);
	xnf_xdp_destroy(&x);
	xnf_native_maps_free();
	return len == RECORD_BROKEN ? 1 : 0;
}
