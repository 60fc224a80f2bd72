/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What xnf-gen puts in every frame and what its receiver keeps: shared by the
 * generator's program, the receiver's program and the user-space tool.
 */
#ifndef XNF_GEN_PROBE_H
#define XNF_GEN_PROBE_H

#include <linux/types.h>
#include <xnf/gtpu.h>

#define XNF_PROBE_MAGIC 0x584eu /* "XN" */
#define XNF_GEN_MAX_FLOWS 65536
#define XNF_GEN_MAX_THREADS 64
/* The longest frame xnf-gen sends, FCS included: a switch's usual jumbo limit (MTU 9,000 frames and their tags). */
#define XNF_GEN_MAX_FRAME 9216

/* Right after the L4 header. 16 bytes: a 64-byte IPv4/UDP frame has room for it. */
struct xnf_probe {
	__be16 magic;
	__u16 flow;
	__u32 seq;    /* per flow, from 0 */
	__u64 tx_ns;  /* bpf_ktime_get_ns() when the frame was built: the receiver shares the clock */
} __attribute__((packed));

/* The payload after the probe, so that a receiver can check every byte of it: 8-byte words in the CPU's order,
 * word w (from the probe's end) XNF_GEN_PAYLOAD_SEED ^ (w * XNF_GEN_PAYLOAD_STEP), a last partial word its first
 * bytes. No two words alike: a buffer lost, repeated, moved or cut short shows. */
#define XNF_GEN_PAYLOAD_SEED 0x584e462d67656e21ull
#define XNF_GEN_PAYLOAD_STEP 0x9e3779b97f4a7c15ull

static inline __u64 xnf_gen_payload_word(__u64 w)
{
	return XNF_GEN_PAYLOAD_SEED ^ (w * XNF_GEN_PAYLOAD_STEP);
}

/* Which header fields change with the flow number. */
enum xnf_gen_vary {
	XNF_VARY_SPORT = 1 << 0,
	XNF_VARY_DPORT = 1 << 1,
	XNF_VARY_SADDR = 1 << 2, /* last 16 bits of the address */
	XNF_VARY_DADDR = 1 << 3,
	XNF_VARY_TEID = 1 << 4,  /* a tunnelled class's TEID */
};

/* Where a tunnelled class's TEID sits in its frame: after Ethernet, IPv4, UDP and the GTP-U header's first word. */
#define XNF_GEN_GTPU_TEID_OFFSET (20 + 8 + 4)   /* from the outer IPv4 header */

/* Traffic classes: each has its own headers and flows, and a share of the frames. Frame n of a thread
 * is of class schedule[n % XNF_GEN_SCHEDULE]: shares are exact to 1/1024 over every 1024 frames. */
#define XNF_GEN_MAX_CLASSES 8
#define XNF_GEN_SCHEDULE 1024

struct xnf_gen_class {
	__u32 first_flow;   /* the class's flows are first_flow .. first_flow + flows - 1 */
	__u32 flows;
	__u32 vary;         /* enum xnf_gen_vary bits */
	__u32 ipv6;         /* and tcp: the headers, so where the L4 header (14 + 20 or 40) and the probe start */
	__u32 tcp;
	__u32 l4_csum;      /* the L4 checksum must be kept right (IPv6, or TCP) */
	__u16 base_sport, base_dport;
	__u16 base_saddr_low, base_daddr_low; /* host order: the last 16 bits of the addresses */
	__u32 encap;        /* bytes of tunnel headers after Ethernet: 0, or GTPU_ENCAP_LEN */
	__u32 base_teid;    /* host order: a tunnelled class's first TEID */
	__u32 tags;         /* bytes of 802.1Q tags after the MACs: 0, 4 or 8 */
	__u32 frame_len;    /* the class's frames' bytes without FCS */
};

/* Set in .rodata before load. */
struct xnf_gen_config {
	__u32 ifindex;      /* the sending interface: frames from anywhere else are not the generator's */
	__u32 random_flows; /* 0: flows in turn; 1: a random flow per frame */
	__u32 stamp_mask;   /* frames whose seq & mask is 0 carry a send time; the others carry 0 */
	__u32 nclasses;
	__u32 fit_length;   /* live frames of classes of several lengths: each frame cut to its class's */
	__u32 multi_buffer; /* loaded to take frames of several buffers (--write-pcap past a page) */
	__u32 seed_mark;    /* the tc sender: a seed of this run carries this mark, on this interface (the loopback) */
	__u32 seed_ifindex;
	__u32 seed_count_offset; /* where in a seed user space wrote how many frames it becomes (a __u32) */
	__u32 tx_queues;    /* the tc sender: the sending interface's tx queues (a frame leaves on its CPU's) */
	struct xnf_gen_class classes[XNF_GEN_MAX_CLASSES];
	__u8 schedule[XNF_GEN_SCHEDULE];
};

/* Each class's frame's first bytes, kept by the program to restore each recycled frame: headers and probe fit. */
#define XNF_GEN_TEMPLATE_MAX 136

/* Per CPU, written by user space before a run: which thread this CPU's frames belong to. */
struct xnf_gen_cpu {
	__u32 thread;
	__u32 nthreads;
	__u64 next;   /* frames built on this CPU */
	__u64 next_in_class[XNF_GEN_MAX_CLASSES]; /* of them, per class: picks the class's flows in turn */
	__u64 refused; /* the tc sender: frames the interface refused (its peer's ring full) */
};

/* The tc sender: the most frames one seed becomes (a veth's receive ring holds 256 before its peer's receive runs,
 * which it does when the seed's send ends). */
#define XNF_GEN_FANOUT_MAX 128

/* Log-linear latency histogram: 8 sub-buckets per power of two of nanoseconds. */
#define XNF_LAT_SUB_BITS 3
#define XNF_LAT_BUCKETS (64 << XNF_LAT_SUB_BITS)

/* Receiver's per-flow state, per CPU (merged in user space). */
struct xnf_recv_flow {
	__u64 packets;
	__u32 next_seq;   /* one past the highest sequence number seen */
	__u32 reordered;  /* frames that arrived after a later one of their flow */
};

enum xnf_recv_counter {
	XNF_RECV_PROBES = 0,  /* frames carrying our probe */
	XNF_RECV_OTHER,       /* frames that did not: not ours, or too mangled to tell */
	XNF_RECV_PAYLOAD_CHECKED, /* with the payload check: frames whose every payload byte was compared */
	XNF_RECV_PAYLOAD_WRONG,   /* of them, frames with a byte not as sent, or shorter than their IP length says */
	XNF_RECV_NCOUNTERS,
};

#endif
