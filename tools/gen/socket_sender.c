// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "socket_sender.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

/* Room in the socket's send buffer for two batches of the longest frames in flight: past that, a call waits for the
 * device to be done with the sender's earlier frames. */
#define SEND_BUFFER_BYTES (2 * SOCKET_SENDER_BATCH * (XNF_GEN_MAX_FRAME + 512))

int socket_sender_open(struct socket_sender *s, int ifindex, int prog_fd, const struct socket_sender_class *classes,
		       __u32 nclasses, const __u8 *schedule)
{
	struct sockaddr_ll at = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int on = 1, bytes = SEND_BUFFER_BYTES;

	memset(s, 0, sizeof(*s));
	s->ifindex = ifindex;
	s->prog_fd = prog_fd;
	s->classes = classes;
	s->schedule = schedule;
	s->one_class = nclasses <= 1;
	/* Protocol 0: the socket only sends; it receives nothing. */
	s->fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (s->fd < 0)
		return errno;
	if (bind(s->fd, (struct sockaddr *)&at, sizeof(at)) ||
	    setsockopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &on, sizeof(on)) ||
	    setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes))) {
		int err = errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	for (__u32 i = 0; i < SOCKET_SENDER_BATCH; i++) {
		s->msgs[i].msg_hdr.msg_iov = s->iov[i];
		s->msgs[i].msg_hdr.msg_iovlen = 2;
	}
	return 0;
}

/* Frame i of the batch: the program writes the class's headers and the probe into heads[i]; the payload is the
 * class's own, untouched. The class is the one the program picks for this CPU's next frame. */
static int build(struct socket_sender *s, __u32 i)
{
	const struct socket_sender_class *c = &s->classes[s->one_class ? 0 : s->schedule[s->built % XNF_GEN_SCHEDULE]];
	struct xdp_md ctx = { .data_end = SOCKET_SENDER_HEAD_LEN, .ingress_ifindex = (__u32)s->ifindex };
	static const __u8 zeros[SOCKET_SENDER_HEAD_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = zeros, .data_size_in = sizeof(zeros), .data_out = s->heads[i],
		    .data_size_out = SOCKET_SENDER_HEAD_LEN, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (bpf_prog_test_run_opts(s->prog_fd, &run))
		return errno;
	if (run.retval != XDP_TX)
		return EPROTO;
	s->built++;
	s->iov[i][0] = (struct iovec){ .iov_base = s->heads[i], .iov_len = c->head_len };
	s->iov[i][1] = (struct iovec){ .iov_base = (void *)(c->frame + c->head_len), .iov_len = c->len - c->head_len };
	return 0;
}

int socket_sender_send(struct socket_sender *s, __u32 n, __u64 *refused)
{
	__u32 done = 0;

	if (n > SOCKET_SENDER_BATCH)
		n = SOCKET_SENDER_BATCH;
	for (__u32 i = 0; i < n; i++) {
		int err = build(s, i);

		if (err)
			return err;
	}
	while (done < n) {
		int sent = sendmmsg(s->fd, s->msgs + done, n - done, 0);

		if (sent > 0) {
			done += (__u32)sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		/* The frame at done was refused: ENOBUFS when the device (a veth's peer ring) would not take it. */
		if (sent < 0 && errno != ENOBUFS)
			return errno;
		(*refused)++;
		done++;
	}
	return 0;
}

void socket_sender_close(struct socket_sender *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
