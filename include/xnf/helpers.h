/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Time, randomness and small packet edits with the same meaning on both
 * targets. Time is CLOCK_MONOTONIC on both sides (bpf_ktime_get_ns reads it; the coarse one is its value at a
 * recent tick on both).
 */
#ifndef XNF_HELPERS_H
#define XNF_HELPERS_H

#include <xnf/common.h>
#include <xnf/maps.h>
#include <xnf/pkt.h>
#include <linux/if_ether.h>

#ifdef XNF_TARGET_BPF

static __always_inline __u64 xnf_now_ns(void)
{
	return bpf_ktime_get_ns();
}

/*
 * What the two helpers below keep on each CPU, so that a frame's coarse time and random number take no helper call:
 * a call cost about 30 ns a frame each on the AMD host (every return goes through a thunk there), a third of what
 * the stateful acl's established frames cost beyond the stateless acl's (research/lab-notebook.md, 2026-11-29).
 */
struct xnf__helper_state {
	__u64 tick;      /* jiffies when tick_ns was read */
	__u64 tick_ns;   /* the coarse clock then */
	__u32 random;    /* xorshift32's state; 0: not seeded yet */
	__u32 pad;
};

XNF_MAP_PERCPU_ARRAY(xnf_helper_state, struct xnf__helper_state, 1);

/* A per-CPU array's lookup is inlined by the verifier of recent kernels (6.18's xlated program shows no call). */
static __always_inline struct xnf__helper_state *xnf__helper_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_helper_state, &zero);
}

/* CLOCK_MONOTONIC as of a recent tick (the kernel's coarse clock, read once per tick on each CPU: at most two ticks,
 * 2-20 ms, behind), where a frame's time is an idle time's and need not be exact. Compare it only with times it
 * gave. bpf_jiffies64 is one load: the verifier inlines it. */
static __always_inline __u64 xnf_now_coarse_ns(void)
{
	struct xnf__helper_state *s = xnf__helper_state();
	__u64 tick = bpf_jiffies64();

	if (!s)
		return bpf_ktime_get_coarse_ns();
	if (s->tick != tick || !s->tick_ns) {
		s->tick_ns = bpf_ktime_get_coarse_ns();
		s->tick = tick;
	}
	return s->tick_ns;
}

/* xorshift32 per CPU, seeded by the kernel's generator: fast, and good enough for load spreading and sampling (as
 * the native build's, per thread). Not for anything an attacker must not guess. */
static __always_inline __u32 xnf_random_u32(void)
{
	struct xnf__helper_state *s = xnf__helper_state();
	__u32 x;

	if (!s)
		return bpf_get_prandom_u32();
	x = s->random ? s->random : bpf_get_prandom_u32() | 1u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->random = x;
	return x;
}

/*
 * The kernel's routing table and neighbours for the frame (bpf_fib_lookup, kernel builds only). In XDP the MTU is
 * checked against fib->tot_len; at tc the kernel checks the skb itself, which knows that a GSO segment of 64 KiB
 * leaves as frames that fit: a length given would make every such segment "too big".
 */
static __always_inline long xnf_fib_lookup(struct xnf_pkt *pkt, struct bpf_fib_lookup *fib)
{
#ifdef XNF_HOOK_TC
	fib->tot_len = 0;
#endif
	return bpf_fib_lookup(pkt->ctx, fib, sizeof(*fib), 0);
}

#else

#include <time.h>

static inline __u64 xnf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static inline __u64 xnf_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* xorshift32 per thread: fast, and good enough for load spreading and sampling. */
static inline __u32 xnf_random_u32(void)
{
	static __thread __u32 state;

	if (XNF_UNLIKELY(state == 0))
		state = (__u32)xnf_now_ns() | 1u;
	state ^= state << 13;
	state ^= state >> 17;
	state ^= state << 5;
	return state;
}

#endif

/* Whether an entry last used at last_seen_ns has been idle longer than timeout_ns at now: the rule of every idle time,
 * on the data path and in the sweepers. Signed: another CPU may have stamped it a moment "after" this one's clock. */
static __always_inline int xnf_idle_past(__u64 now, __u64 last_seen_ns, __u64 timeout_ns)
{
	return (__s64)(now - last_seen_ns) > (__s64)timeout_ns;
}

/* Notes an entry's use at now (xnf_now_coarse_ns: a tick's time), written only when it changes. An entry both
 * directions of a flow use is often used on two CPUs (RSS hashes each direction its own way): written on every
 * frame, its cache line would go from one to the other and back (research/lab-notebook.md, 2026-11-30). */
static __always_inline void xnf_stamp(__u64 *last_seen_ns, __u64 now)
{
	if (*last_seen_ns != now)
		*last_seen_ns = now;
}

/*
 * A function the kernel's verifier checks once, on its own, rather than once for every path of the program that calls
 * it (a BPF global function): for a search behind many branches, the difference between loading and not. Its
 * arguments are scalars, the hook's context and pointers to the caller's stack or a map's value (never into the
 * packet), and a pointer may be NULL to the verifier: check it. Its stack adds to its caller's. Natively a plain
 * static function.
 */
#ifdef XNF_TARGET_BPF
#define XNF_VERIFIED_APART __attribute__((noinline))
#else
#define XNF_VERIFIED_APART static
#endif

/*
 * Calls fn(i, ctx) for i = 0, 1, ... n-1 until fn returns non-zero; returns
 * the number of calls. fn is `static long fn(__u32 i, void *ctx)`. In the
 * kernel this is bpf_loop (fn is verified once, whatever n is, up to 8M);
 * natively a plain loop the compiler inlines fn into.
 */
#ifdef XNF_TARGET_BPF
#define xnf_loop(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)

/*
 * value, which the verifier may not take as known. Linux before 6.7 (Debian 12's 6.1 among them) checks a bpf_loop
 * callback once, with its state as the caller set it before the first call: a flag the caller zeroed is zero in
 * every call to it, so it cuts the code that runs once the flag is set, and the kernel then runs as if it never
 * were (a search's "found" never holds, and the last match wins over the best). State that a callback's branches
 * read is set with this. At run time it is value: no CPU number has bit 31.
 */
static __always_inline __u32 xnf_loop_state(__u32 value)
{
	return value | (bpf_get_smp_processor_id() >> 31);
}
#else
#define xnf_loop_state(value) ((__u32)(value))
static __always_inline long xnf_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	for (__u32 i = 0; i < n; i++) {
		if (fn(i, ctx))
			return (long)i + 1;
	}
	return n;
}
#endif

/*
 * Takes the start of the Ethernet header (bounds-checked by the caller).
 * struct ethhdr is packed, so memcpy on its fields compiles to twelve byte
 * loads and stores; frames start 2-byte aligned on both paths, so three
 * 16-bit words each way do the same job.
 */
static __always_inline void xnf_swap_macs(void *eth)
{
	__u16 *w = eth;
	__u16 d0 = w[0], d1 = w[1], d2 = w[2];

	w[0] = w[3];
	w[1] = w[4];
	w[2] = w[5];
	w[3] = d0;
	w[4] = d1;
	w[5] = d2;
}

#endif /* XNF_HELPERS_H */
