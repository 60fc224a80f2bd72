// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tc_sender.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


__u32 tc_sender_mark(void)
{
	return 0x78000000u | ((__u32)getpid() & 0xffffffu);
}

int tc_sender_hook(struct tc_sender_hook *h, int prog_fd)
{
	int fd;

	memset(h, 0, sizeof(*h));
	snprintf(h->port.name, sizeof(h->port.name), "%s", TC_SENDER_SEED_IFACE);
	h->port.ifindex = (int)if_nametoindex(TC_SENDER_SEED_IFACE);
	if (!h->port.ifindex)
		return errno;
	fd = xnf_tc_attach(prog_fd, &h->port, true, false, &h->via);
	if (fd < 0 && fd != XNF_TC_NO_LINK)
		return -fd;
	h->link_fd = fd >= 0 ? fd : -1;
	return 0;
}

void tc_sender_unhook(struct tc_sender_hook *h)
{
	xnf_tc_detach(&h->port, true, h->link_fd, h->via);
	h->link_fd = -1;
	h->via = XNF_TC_VIA_LINK;
}

int tc_sender_open(struct tc_sender *s, const __u8 *seed, __u32 seed_len, __u32 count_offset)
{
	struct sockaddr_ll at = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(TC_SENDER_SEED_IFACE) };
	__u32 mark = tc_sender_mark();

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	s->seed_len = seed_len;
	s->count_offset = count_offset;
	/* Protocol 0: the socket only sends. Not past the qdisc: the program waits at the egress hook. */
	s->mark = mark;
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return errno;
	if (bind(s->fd, (struct sockaddr *)&at, sizeof(at)) || setsockopt(s->fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		int err = errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	/* Each seed: the frame with its count where the program reads it. */
	for (__u32 i = 0; i < TC_SENDER_BATCH; i++) {
		s->iov[i][0] = (struct iovec){ .iov_base = (void *)seed, .iov_len = count_offset };
		s->iov[i][1] = (struct iovec){ .iov_base = &s->counts[i], .iov_len = sizeof(s->counts[i]) };
		s->iov[i][2] = (struct iovec){ .iov_base = (void *)(seed + count_offset + sizeof(__u32)),
					       .iov_len = seed_len - count_offset - sizeof(__u32) };
		s->msgs[i].msg_hdr.msg_iov = s->iov[i];
		s->msgs[i].msg_hdr.msg_iovlen = 3;
	}
	return 0;
}

/* Seeds for up to a batch of seeds' frames: how many seeds, their counts written. */
static __u32 plan_seeds(struct tc_sender *s, __u64 n)
{
	__u32 seeds = 0;

	while (n && seeds < TC_SENDER_BATCH) {
		s->counts[seeds] = n < XNF_GEN_FANOUT_MAX ? (__u32)n : XNF_GEN_FANOUT_MAX;
		n -= s->counts[seeds++];
	}
	return seeds;
}

int tc_sender_send(struct tc_sender *s, __u64 n)
{
	while (n) {
		__u32 seeds = plan_seeds(s, n), done = 0;

		while (done < seeds) {
			int sent = sendmmsg(s->fd, s->msgs + done, seeds - done, 0);

			if (sent > 0)
				done += (__u32)sent;
			else if (errno != EINTR)
				return errno; /* the program refused a seed: a run it cannot build */
		}
		for (__u32 i = 0; i < seeds; i++)
			n -= s->counts[i];
	}
	return 0;
}

void tc_sender_close(struct tc_sender *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
