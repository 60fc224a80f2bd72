/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A device with a known capacity, for testing the throughput search: a token
 * bucket of RATE frames per second (burst BURST) per CPU; frames within it are
 * swapped and sent back, the excess is dropped.
 */
#include <xnf/nf.h>

#define RATE 200000ull
#define BURST 2000ull

struct bucket {
	__u64 last_ns;
	__u64 tokens;
};

XNF_MAP_PERCPU_ARRAY(buckets, struct bucket, 1);

static __always_inline xnf_verdict ratelimit(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;
	__u32 zero = 0;
	struct bucket *b = xnf_map_lookup(&buckets, &zero);
	__u64 now = xnf_now_ns(), earned;

	if ((void *)(eth + 1) > pkt->data_end || !b)
		return XNF_DROP_MALFORMED;
	earned = (now - b->last_ns) * RATE / 1000000000ull;
	if (earned) {
		b->tokens = b->tokens + earned > BURST ? BURST : b->tokens + earned;
		b->last_ns += earned * 1000000000ull / RATE;
	}
	if (b->last_ns == 0 || now - b->last_ns > 1000000000ull)
		b->last_ns = now; /* first frame, or idle for long: start the clock here */
	if (!b->tokens)
		return XNF_DROP;
	b->tokens--;
	xnf_swap_macs(eth);
	return XNF_TX;
}
XNF_DEFINE_NF(ratelimit);
