/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internet checksum helpers (RFC 1071, incremental update per RFC 1624),
 * written in plain C so both targets compute bit-identical results.
 */
#ifndef XNF_CSUM_H
#define XNF_CSUM_H

#include <xnf/common.h>
#include <linux/ip.h>
#include <linux/udp.h>

static __always_inline __u16 xnf_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* An unfolded sum with a 32-bit word's two 16-bit halves added (an address of a pseudo-header). */
static __always_inline __u32 xnf__sum_words32(__u32 sum, __be32 word)
{
	return sum + (word & 0xffff) + (word >> 16);
}

/* Updates *csum for a 16-bit field that changed from old to new (network order). */
static __always_inline void xnf_csum_replace2(__sum16 *csum, __be16 old, __be16 new)
{
	__u32 sum = (__u16)~*csum;

	sum += (__u16)~old;
	sum += new;
	*csum = (__sum16)xnf_csum_fold(sum);
}

/* Updates *csum for a 32-bit field that changed from old to new (network order). */
static __always_inline void xnf_csum_replace4(__sum16 *csum, __be32 old, __be32 new)
{
	__u32 sum = (__u16)~*csum;

	sum += (__u16)~(old & 0xffff);
	sum += (__u16)~(old >> 16);
	sum += new & 0xffff;
	sum += new >> 16;
	*csum = (__sum16)xnf_csum_fold(sum);
}

/*
 * UDP over IPv4 may carry no checksum (0), which must stay 0; a checksum that
 * computes to 0 is sent as 0xffff (RFC 768).
 */
static __always_inline void xnf_udp_csum_replace2(struct udphdr *udp, __be16 old, __be16 new)
{
	if (!udp->check)
		return;
	xnf_csum_replace2(&udp->check, old, new);
	if (!udp->check)
		udp->check = (__sum16)0xffff;
}

static __always_inline void xnf_udp_csum_replace4(struct udphdr *udp, __be32 old, __be32 new)
{
	if (!udp->check)
		return;
	xnf_csum_replace4(&udp->check, old, new);
	if (!udp->check)
		udp->check = (__sum16)0xffff;
}

/*
 * Recomputes the IPv4 header checksum in place. The caller has already
 * bounds-checked ihl * 4 bytes (xnf_parse_headers does).
 */
static __always_inline void xnf_ipv4_csum_update(struct iphdr *ip, const void *data_end)
{
	__u16 *word = (__u16 *)ip;
	__u32 nwords = ip->ihl * 2;
	__u32 sum = 0;

	ip->check = 0;
	for (__u32 i = 0; i < 30; i++) { /* 60-byte maximum header */
		if (i >= nwords || (const char *)(word + i + 1) > (const char *)data_end)
			break;
		sum += word[i];
	}
	ip->check = (__sum16)xnf_csum_fold(sum);
}

/* Longest stretch xnf_csum_partial() adds up: a 4 KiB frame. */
#define XNF_CSUM_MAX_BYTES 4096
#define XNF_CSUM_CHUNK 32

/*
 * seed plus len bytes from start as 16-bit words in memory order (an odd last
 * byte padded with zero), stopping at data_end. Fold it with xnf_csum_fold().
 * Three independent passes (the odd byte, the words after the last whole
 * 32-byte chunk, the chunks) so that the BPF verifier explores each loop once
 * instead of once per way out of the one before it.
 */
static __always_inline __u32 xnf_csum_partial(const void *start, __u32 len, const void *data_end, __u32 seed)
{
	const __u8 *bytes = start;
	__u32 sum = seed, tail, chunks;

	if (len > XNF_CSUM_MAX_BYTES)
		len = XNF_CSUM_MAX_BYTES;
	/* A mask the verifier can read as a bound (it loses the comparison's in a register copy). */
	xnf_barrier_var(len);
	len &= 2 * XNF_CSUM_MAX_BYTES - 1;
	if (len & 1) {
		const __u8 *last = bytes + ((len - 1) & (2 * XNF_CSUM_MAX_BYTES - 1));
		__u16 padded = 0;

		if ((const char *)(last + 1) <= (const char *)data_end) {
			__builtin_memcpy(&padded, last, 1);
			sum += padded;
		}
	}
	tail = len & ~(__u32)(XNF_CSUM_CHUNK - 1);
	for (__u32 i = 0; i < XNF_CSUM_CHUNK / 2; i++) {
		const __u16 *w = (const __u16 *)(bytes + tail) + i;

		if (tail + 2 * i + 2 > len || (const char *)(w + 1) > (const char *)data_end)
			break;
		sum += *w;
	}
	chunks = len / XNF_CSUM_CHUNK;
	for (__u32 i = 0; i < XNF_CSUM_MAX_BYTES / XNF_CSUM_CHUNK; i++) {
		const __u16 *w = (const __u16 *)(bytes + i * XNF_CSUM_CHUNK);

		if (i >= chunks || (const char *)(w + XNF_CSUM_CHUNK / 2) > (const char *)data_end)
			break;
		sum += (__u32)w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7];
		sum += (__u32)w[8] + w[9] + w[10] + w[11] + w[12] + w[13] + w[14] + w[15];
	}
	return sum;
}

#endif /* XNF_CSUM_H */
