/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The single-source NF API. An NF is one function
 *
 *     static __always_inline xnf_verdict my_nf(struct xnf_pkt *pkt);
 *     XNF_DEFINE_NF(my_nf);
 *
 * compiled three times: with `clang -target bpf` it becomes an XDP program, and
 * with -DXNF_HOOK_TC a tc program (the skb layer); with the host compiler it
 * becomes a batch function the user-space runtime calls once per batch, with
 * my_nf inlined into the loop (no per-packet indirect call).
 */
#ifndef XNF_NF_H
#define XNF_NF_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <xnf/verdict.h>
#include <xnf/maps.h>
#include <xnf/parse.h>
#include <xnf/csum.h>
#include <xnf/l4_csum.h>
#include <xnf/helpers.h>
#include <xnf/frame_start.h>
#include <xnf/frame_bytes.h>
#include <xnf/drop_rules.h>

/* The glue below is xnf's own (include/xnf/internal/): reachable from here, not from an NF's source. */
#define XNF__FROM_SDK

#ifdef XNF_TARGET_BPF
/* Written by the loader before load: constant to the verifier. */
const volatile struct xnf_config xnf_cfg = {};
#else
#include <xnf/internal/nf_entry.h>
#endif

/*
 * Counters of the NF's own, beside the verdict counters: an NF declares
 *     enum { FW_CNT_RULE_DROP, FW_CNT_NON_IP };
 *     XNF_COUNTER_NAMES("rule_drop", "non_ip");
 * counts with xnf_count_event(FW_CNT_NON_IP), and `xnf stats` shows them by name, on either path.
 * In a chain every member counts from its own base (XNF_COUNTER_BASE), set by the chain's code.
 */
XNF_MAP_PERCPU_ARRAY(xnf_nf_counters, __u64, XNF_MAX_NF_COUNTERS);

static __always_inline void xnf__count_event_at(__u32 index)
{
	__u64 *count = xnf_map_lookup(&xnf_nf_counters, &index);

	if (count)
		(*count)++;
}

#ifndef XNF_COUNTER_BASE
#define XNF_COUNTER_BASE 0
#endif
#define xnf_count_event(index) xnf__count_event_at((XNF_COUNTER_BASE) + (index))

#define XNF__CAT2(a, b) a##b
#define XNF__CAT(a, b) XNF__CAT2(a, b)
#define XNF__COUNT_NAMES(...) ((__u32)(sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *)))

#if defined(XNF_CHAIN_MEMBER)
/* In a chain: how many counters the member has (the next member counts from after them) and, natively, their
 * names. The chain's code declares both beforehand, tentatively: a member without counters leaves them 0. */
#ifdef XNF_TARGET_BPF
#define XNF_COUNTER_NAMES(...) \
	static const __u32 XNF__CAT(xnf_ncounters_, XNF_CHAIN_MEMBER) = XNF__COUNT_NAMES(__VA_ARGS__)
#else
#define XNF_COUNTER_NAMES(...)                                                                  \
	static const __u32 XNF__CAT(xnf_ncounters_, XNF_CHAIN_MEMBER) = XNF__COUNT_NAMES(__VA_ARGS__); \
	static const char *const *const XNF__CAT(xnf_counter_names_, XNF_CHAIN_MEMBER) =        \
		(const char *const[]){ __VA_ARGS__, NULL }
#endif
#elif defined(XNF_TARGET_BPF)
#define XNF_COUNTER_NAMES(...) extern int xnf__counter_names_are_native_only
#else
#define XNF_COUNTER_NAMES(...) const char *xnf_nf_counter_names[] = { __VA_ARGS__, NULL }
#endif

static __always_inline __u32 xnf_nports(void)
{
	return xnf_cfg.nports;
}

/* The port (command-line order) an interface is; 0 if it is none of this instance's. */
static __always_inline int xnf_port_of_ifindex(__u32 ifindex, __u32 *port)
{
	return xnf_config_port_of(&xnf_cfg, ifindex, port);
}

/* Index (command-line order) of the port the packet arrived on. */
static __always_inline __u32 xnf_ingress_port(const struct xnf_pkt *pkt)
{
#ifdef XNF_TARGET_BPF
	__u32 port = 0;

	xnf_port_of_ifindex(pkt->ctx->ingress_ifindex, &port);
	return port;
#else
	return pkt->ingress_port;
#endif
}

/*
 * "Send it on": back out of the ingress port when the NF has one port, else
 * out of the next port in command-line order (0->1, 1->0 for two ports).
 */
static __always_inline xnf_verdict xnf_forward(const struct xnf_pkt *pkt)
{
	__u32 nports = xnf_nports();

	if (nports <= 1)
		return XNF_TX;
	return XNF_REDIRECT((xnf_ingress_port(pkt) + 1) % nports);
}

/* What the entry points do as a frame starts for the NF's rules tables: nothing unless the NF has some
 * (xnf/rules_tables.h, which redefines it; the entry points are expanded after the NF's source). */
#define XNF__RULES_FRAME_BEGIN() ((void)0)

#ifdef XNF_TARGET_BPF
#include <xnf/internal/bpf_glue.h>
#else
#include <xnf/internal/native_glue.h>
#endif

#undef XNF__FROM_SDK

#endif /* XNF_NF_H */
