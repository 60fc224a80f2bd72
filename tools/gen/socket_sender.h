/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnf-gen's second way out, for frames live frames cannot carry (longer than a page: the kernel's live-frames
 * test run refuses them): the generator's own program builds each frame's headers and probe in a test run
 * (not live: its output comes back), and a packet socket sends those headers with the class's payload, in
 * batches (sendmmsg, past the qdisc). One sender per thread; the thread's CPU is the program's (its per-CPU
 * flow state).
 */
#ifndef XNF_GEN_SOCKET_SENDER_H
#define XNF_GEN_SOCKET_SENDER_H

#include <stdbool.h>
#include <sys/uio.h>
#include <linux/types.h>
#include <sys/socket.h>

#include "probe.h"

#define SOCKET_SENDER_BATCH 64
/* What the program is given to build into: every class's headers and probe fit (XNF_GEN_TEMPLATE_MAX). */
#define SOCKET_SENDER_HEAD_LEN (XNF_GEN_TEMPLATE_MAX + 8)

/* A class as the sender sends it: its whole frame (template and payload) and where the payload starts. */
struct socket_sender_class {
	const __u8 *frame;
	__u32 len;       /* without FCS */
	__u32 head_len;  /* headers and probe: what the program writes */
};

struct socket_sender {
	int fd;
	int prog_fd;
	int ifindex;
	const struct socket_sender_class *classes;
	const __u8 *schedule;   /* the program's: frame n of this CPU is of class schedule[n % XNF_GEN_SCHEDULE] */
	bool one_class;
	__u64 built;            /* frames the program built on this thread's CPU */
	__u8 heads[SOCKET_SENDER_BATCH][SOCKET_SENDER_HEAD_LEN];
	struct iovec iov[SOCKET_SENDER_BATCH][2];
	struct mmsghdr msgs[SOCKET_SENDER_BATCH];
};

/* A packet socket on ifindex, past the qdisc, with a send buffer for a batch of the longest frames. 0, or an
 * errno. */
int socket_sender_open(struct socket_sender *s, int ifindex, int prog_fd, const struct socket_sender_class *classes,
		       __u32 nclasses, const __u8 *schedule);
/* Builds n frames (at most a batch) and sends them. 0, or an errno that ends the run; *refused counts the frames the
 * interface would not take (its queue or its peer's ring full), which are lost as live frames' send errors are. */
int socket_sender_send(struct socket_sender *s, __u32 n, __u64 *refused);
void socket_sender_close(struct socket_sender *s);

#endif
