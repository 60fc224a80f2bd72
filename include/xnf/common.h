/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Definitions shared by the kernel (BPF) and the native build of an NF, and by
 * the user-space runtime that has to agree with both on layouts.
 */
#ifndef XNF_COMMON_H
#define XNF_COMMON_H

#include <linux/types.h>

/*
 * Makes the compiler forget what it knows about var, so that a bounds check
 * that follows is emitted as written (the BPF verifier needs to see it).
 */
#define xnf_barrier_var(var) __asm__ volatile("" : "+r"(var))

#ifdef __BPF__
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#define XNF_TARGET_BPF 1

/*
 * A 16-bit field read from a frame, in host order, as a value the verifier can bound. Older verifiers (Debian 12's
 * 6.1) follow no bounds through a byte swap, and refuse a length read from a header and added to a packet pointer
 * ("math between pkt pointer and register with unbounded min value"). The mask says 0..65535; the barrier keeps the
 * compiler from dropping it as redundant. Newer verifiers need neither: one instruction a swap.
 */
static __always_inline __u16 xnf__ntohs(__u16 raw)
{
	__u32 value = __bpf_ntohs(raw);

	xnf_barrier_var(value);
	return (__u16)(value & 0xffff);
}
#undef bpf_ntohs
#define bpf_ntohs(x) (__builtin_constant_p(x) ? __bpf_constant_ntohs(x) : xnf__ntohs(x))
#else
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#define XNF_TARGET_NATIVE 1
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define bpf_htons(x) htons(x)
#define bpf_ntohs(x) ntohs(x)
#define bpf_htonl(x) htonl(x)
#define bpf_ntohl(x) ntohl(x)
#endif

#define XNF_LIKELY(x) __builtin_expect(!!(x), 1)
#define XNF_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Ports are the interfaces an NF instance was started on, numbered in command-line order. */
#define XNF_MAX_PORTS 8
/* Queues per port that AF_XDP sockets can serve. */
#define XNF_MAX_QUEUES 16
/* Pure-drop rules (--offload-drops): most the XDP pre-filter holds, most whose hits are counted. */
#define XNF_MAX_OFFLOADED_DROPS 4096
#define XNF_MAX_DROP_RULE_HITS 65536
/* Counters of an NF's own (XNF_COUNTER_NAMES), a chain's members together. */
#define XNF_MAX_NF_COUNTERS 32

/* Where the XDP program sends packets (the NF's verdict, or a user-space socket). */
enum xnf_datapath {
	XNF_DATAPATH_KERNEL = 0, /* run the NF in XDP */
	XNF_DATAPATH_USER = 1,   /* redirect every packet to the AF_XDP socket of its port and queue */
	XNF_DATAPATH_HYBRID = 2, /* run the NF in XDP; drops and passes stay there, TX and REDIRECT go to
				  * the AF_XDP socket with the verdict in the frame's metadata */
	XNF_DATAPATH_SPLIT = 3,  /* a split chain: XDP runs the first xnf_config.chain_split members, frames
				  * they send on go to the AF_XDP socket, whose worker runs the rest */
};

/*
 * Run-time configuration the loader writes into the BPF object's .rodata before
 * loading, so that the verifier sees it as constant and prunes what is unused.
 */
struct xnf_config {
	__u32 nports;
	__u32 ifindex[XNF_MAX_PORTS];
	__u32 datapath; /* enum xnf_datapath */
	/* The dispatcher (--local, user-space modes): frames on these rx queues (a bit each), or for the
	 * local_ports entries of xnf_local_ports, go to the local stack in XDP without the NF. */
	__u32 local_queues;
	__u32 local_ports;
	/* Split chains (XNF_DATAPATH_SPLIT): members before this position run in XDP, the others in the
	 * workers; 0 when the chain is not split (every member runs wherever the NF runs). */
	__u32 chain_split;
	/* --offload-drops (user-space modes): the pre-filter of hot pure-drop rules runs before the sockets. */
	__u32 offload_drops;
	/* Generic (skb) XDP: a frame sent on with XDP_TX or a redirect keeps its skb. */
	__u32 skb_mode;
	/* tc: a bit per port that is a veth whose peer is in another namespace: frames sent out of it go straight to
	 * the peer's receive (bpf_redirect_peer). */
	__u32 peer_ports;
	/* --state in the modes with workers: a frame whose socket is gone (its process died, or is stopping) is
	 * handled here by the NF on the kept tables (afxdp), or sent by the kernel (hybrid), as the kernel build would. */
	__u32 kernel_fallback;
	/* XDP loaded with BPF_F_XDP_HAS_FRAGS (the modes that take jumbo frames): a frame may go on past data_end in
	 * further buffers. */
	__u32 frags;
	/* Hybrid on a kernel that refuses XDP metadata: the verdict goes to the workers in 4 bytes pushed in front of the
	 * frame (bpf_xdp_adjust_head), not in its metadata (bpf_xdp_adjust_meta). */
	__u32 verdict_in_frame;
};

/* A key of xnf_local_ports: a local service by protocol and destination port. */
#define XNF_MAX_LOCAL_PORTS 64
struct xnf_local_key {
	__u8 proto;  /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad;
	__be16 port;
};

/* The port (command-line order) an interface is in cfg; 0 if it is none of them. */
static __always_inline int xnf_config_port_of(const volatile struct xnf_config *cfg, __u32 ifindex, __u32 *port)
{
	for (__u32 i = 0; i < XNF_MAX_PORTS; i++) {
		if (i >= cfg->nports)
			break;
		if (cfg->ifindex[i] == ifindex) {
			*port = i;
			return 1;
		}
	}
	return 0;
}

/* Slots of the per-CPU statistics array: one per verdict class, plus reasons. */
enum xnf_stat_slot {
	XNF_STAT_ABORT = 0,
	XNF_STAT_DROP,
	XNF_STAT_PASS,
	XNF_STAT_TX,
	XNF_STAT_REDIRECT,
	XNF_STAT_REDIRECT_ERROR, /* redirect to a port with no device: dropped */
	XNF_STAT_MALFORMED,      /* reason, counted in addition to the verdict */
	XNF_STAT_LOCAL,          /* sent to the local stack by the dispatcher (--local), before the NF */
	XNF_STAT_NOT_READY,      /* arrived while the instance started, before its rules were in force: dropped */
	XNF_STAT_NSLOTS,
};

struct xnf_counter {
	__u64 packets;
	__u64 bytes;
};

#endif /* XNF_COMMON_H */
