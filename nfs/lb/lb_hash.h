/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rendezvous (highest random weight) hashing for the load balancer: a flow
 * goes to the active backend with the highest score(flow, backend). Plain C
 * integer arithmetic, so the kernel and user space pick the same backend for
 * the same flow; the score depends on the backend's address and port, not
 * its slot, and adding or draining one backend moves only the flows it wins
 * or held.
 */
#ifndef XNF_NF_LB_HASH_H
#define XNF_NF_LB_HASH_H

#include <xnf/common.h>

/* The finaliser of SplitMix64: every input bit moves every output bit. */
static __always_inline __u64 lb_mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Folds n 32-bit words into one 64-bit hash. */
static __always_inline __u64 lb_hash_words(const __u32 *words, __u32 n, __u64 seed)
{
	__u64 h = seed;

	for (__u32 i = 0; i < 16; i++) {
		if (i >= n)
			break;
		h = lb_mix64(h ^ words[i]);
	}
	return h;
}

static __always_inline __u64 lb_score(__u64 flow_hash, const __be32 addr[4], __be16 port)
{
	__u32 words[5] = { addr[0], addr[1], addr[2], addr[3], port };

	return lb_mix64(flow_hash ^ lb_hash_words(words, 5, 0x5851f42d4c957f2dull));
}

#endif
