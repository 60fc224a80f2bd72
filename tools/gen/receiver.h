/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xnf-gen's receiver: an XDP program on the interface where the traffic comes back. */
#ifndef XNF_GEN_RECEIVER_H
#define XNF_GEN_RECEIVER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct recv_bpf;

struct receiver {
	struct recv_bpf *skel;
	int link_fd;
	const char *ifname;
	__u32 nclasses;
	bool check_payload;
};

/* A traffic class as the receiver sees it: a range of flows. */
struct receiver_class {
	__u32 first_flow, flows;
};

/* Loads and attaches (native XDP, bpf_link; multi-buffer frames taken). With check_payload, every frame's payload
 * is compared with what the generator writes (probe.h). Prints the reason and returns -1 on failure. */
int receiver_attach(struct receiver *r, const char *ifname, const struct receiver_class *classes, __u32 nclasses,
		    bool check_payload);
/* Writes the JSON members: received, lost, reordered, latency. Loss is counted against what left:
 * frames built per flow, less those the sending interface refused (send_errors, not per flow). */
int receiver_report(const struct receiver *r, const __u64 *sent_per_flow, __u32 flows, __u64 send_errors,
		    FILE *out);
/* The JSON members for one class: received, lost, loss_ratio and its latency summary. Frames the sending
 * interface refused are not known per class: they count as the class's loss. */
int receiver_class_report(const struct receiver *r, const struct receiver_class *c, __u32 index,
			  const __u64 *sent_per_flow, FILE *out);
void receiver_detach(struct receiver *r);

/* Lower edge, in ns, of a latency bucket (exposed for tests of the layout). */
__u64 latency_bucket_floor(__u32 bucket);

#endif
