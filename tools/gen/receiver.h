/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xnf-gen's receiver: an XDP program on the interface where the traffic comes back. */
#ifndef XNF_GEN_RECEIVER_H
#define XNF_GEN_RECEIVER_H

#include <stdio.h>
#include <linux/types.h>

struct recv_bpf;

struct receiver {
	struct recv_bpf *skel;
	int link_fd;
	const char *ifname;
};

/* Loads and attaches (native XDP, bpf_link). Prints the reason and returns -1 on failure. */
int receiver_attach(struct receiver *r, const char *ifname);
/* Writes the JSON members: received, lost, reordered, latency. Loss is counted against what left:
 * frames built per flow, less those the sending interface refused (send_errors, not per flow). */
int receiver_report(const struct receiver *r, const __u64 *sent_per_flow, __u32 flows, __u64 send_errors,
		    FILE *out);
void receiver_detach(struct receiver *r);

/* Lower edge, in ns, of a latency bucket (exposed for tests of the layout). */
__u64 latency_bucket_floor(__u32 bucket);

#endif
