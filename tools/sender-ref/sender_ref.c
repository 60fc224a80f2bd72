// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-sender-ref: the other ways user space can put frames on an interface without live frames, at their best,
 * measured beside xnf-gen's senders (xnf bench run senders): one fixed 64-byte IPv4/UDP frame (xnf-gen's own
 * template), written once, sent unpaced from one pinned thread. No flows, no sequence numbers, no timestamps: an
 * upper bound for a generator built on each way.
 *
 *   mmsg     a packet socket past the qdisc, sendmmsg of 64 frames a call
 *   tpacket  a packet socket's TPACKET_V2 transmit ring past the qdisc, one send() a ring's worth
 *   afxdp    an AF_XDP socket in copy mode, its transmit ring kicked by sendto()
 *
 *   xnf-sender-ref --iface IF --dst-mac MAC --how mmsg|tpacket|afxdp [--core N] [--duration S]
 *
 * Prints one JSON line: {"how", "sent", "refused", "seconds"} (sent: frames the socket took; refused: those it
 * said the interface would not).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include <xnf/helpers.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/rules_text.h>

#include "frame.h"

#define FRAME_LEN 60 /* 64 bytes on the wire with the FCS */
#define BATCH 64
#define RING_FRAMES 4096
#define SLOT 2048

enum { HOW_MMSG, HOW_TPACKET, HOW_AFXDP };
static const char *const hows[] = { [HOW_MMSG] = "mmsg", [HOW_TPACKET] = "tpacket", [HOW_AFXDP] = "afxdp", NULL };

struct options {
	const char *iface;
	const char *dst_mac;
	int how;
	__u32 core;
	double duration_s;
};

struct result {
	__u64 sent, refused;
	int error;
};

#define OPT(field) offsetof(struct options, field)
static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = OPT(iface), .help = "where to send" },
	{ .name = "dst-mac", .kind = XNF_OPT_STRING, .value = "MAC", .offset = OPT(dst_mac),
	  .help = "the frame's destination" },
	{ .name = "how", .kind = XNF_OPT_CHOICE, .value = "WAY", .choices = hows, .offset = OPT(how),
	  .help = "mmsg, tpacket or afxdp (see the top of tools/sender-ref/sender_ref.c)" },
	{ .name = "core", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(core), .min = 0, .max = 4095,
	  .help = "the core the sending thread is pinned to" },
	{ .name = "duration", .kind = XNF_OPT_NUMBER, .value = "S", .offset = OPT(duration_s), .min = 0.01, .max = 3600,
	  .help = "seconds to send" },
	XNF_OPTIONS_END,
};

static void build_frame(__u8 *frame, const __u8 dst_mac[6], const char *iface)
{
	struct frame_spec spec = { .sport = 9, .dport = 9, .size = 64 };

	memcpy(spec.dst_mac, dst_mac, 6);
	xnf_iface_mac(iface, spec.src_mac);
	inet_pton(AF_INET, "198.18.0.1", &spec.src4);
	inet_pton(AF_INET, "198.18.0.2", &spec.dst4);
	frame_build(&spec, frame);
}

static int packet_socket(int ifindex)
{
	struct sockaddr_ll at = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), on = 1;

	if (fd < 0 || bind(fd, (struct sockaddr *)&at, sizeof(at)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &on, sizeof(on))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static struct result send_mmsg(int ifindex, const __u8 *frame, __u64 end_ns)
{
	struct iovec iov = { .iov_base = (void *)frame, .iov_len = FRAME_LEN };
	struct mmsghdr msgs[BATCH];
	struct result r = { 0 };
	int fd = packet_socket(ifindex);

	if (fd < 0)
		return (struct result){ .error = errno };
	for (int i = 0; i < BATCH; i++)
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	while (xnf_now_ns() < end_ns) {
		int sent = sendmmsg(fd, msgs, BATCH, 0);

		if (sent > 0)
			r.sent += (__u64)sent;
		else if (errno == ENOBUFS)
			r.refused++;
		else if (errno != EINTR) {
			r.error = errno;
			break;
		}
	}
	close(fd);
	return r;
}

/* TPACKET_V2: every slot holds the frame; a slot is handed to the kernel by its status, and one send() sends them. */
static struct result send_tpacket(int ifindex, const __u8 *frame, __u64 end_ns)
{
	struct tpacket_req req = { .tp_block_size = 1 << 20, .tp_frame_size = SLOT,
				   .tp_block_nr = RING_FRAMES * SLOT / (1 << 20), .tp_frame_nr = RING_FRAMES };
	int fd = packet_socket(ifindex), version = TPACKET_V2;
	struct result r = { 0 };
	__u8 *ring;

	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)))
		return (struct result){ .error = errno };
	ring = mmap(NULL, (size_t)req.tp_block_size * req.tp_block_nr, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		return (struct result){ .error = errno };
	for (__u32 i = 0; i < RING_FRAMES; i++)
		memcpy(ring + (size_t)i * SLOT + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll), frame, FRAME_LEN);
	for (__u32 next = 0; xnf_now_ns() < end_ns;) {
		__u32 queued = 0;

		for (; queued < RING_FRAMES; queued++, next = (next + 1) % RING_FRAMES) {
			struct tpacket2_hdr *h = (void *)(ring + (size_t)next * SLOT);

			if (h->tp_status != TP_STATUS_AVAILABLE)
				break;
			h->tp_len = FRAME_LEN;
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		}
		if (send(fd, NULL, 0, 0) < 0 && errno != ENOBUFS && errno != EINTR) {
			r.error = errno;
			break;
		}
		r.sent += queued;
	}
	munmap(ring, (size_t)req.tp_block_size * req.tp_block_nr);
	close(fd);
	return r;
}

/* AF_XDP in copy mode, transmit only: every UMEM frame holds the frame; completed ones (sent) go back on the ring. */
static struct result send_afxdp(const char *iface, const __u8 *frame, __u64 end_ns)
{
	struct xsk_socket_config sc = { .tx_size = RING_FRAMES, .rx_size = 0, .bind_flags = XDP_COPY,
					.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD };
	struct xsk_umem_config uc = { .fill_size = RING_FRAMES, .comp_size = RING_FRAMES, .frame_size = SLOT };
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct result r = { 0 };
	__u32 free_frames = RING_FRAMES, next = 0, seen = 0;
	void *area = mmap(NULL, (size_t)RING_FRAMES * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (area == MAP_FAILED)
		return (struct result){ .error = errno };
	for (__u32 i = 0; i < RING_FRAMES; i++)
		memcpy((__u8 *)area + (size_t)i * SLOT, frame, FRAME_LEN);
	err = xsk_umem__create(&umem, area, (__u64)RING_FRAMES * SLOT, &fill, &comp, &uc);
	if (!err)
		err = xsk_socket__create(&xsk, iface, 0, umem, NULL, &tx, &sc);
	if (err)
		return (struct result){ .error = -err };
	while (xnf_now_ns() < end_ns) {
		/* The completion ring's producer counts every frame the kernel is done with: all of it is ours back. */
		__u32 completed = __atomic_load_n(comp.producer, __ATOMIC_ACQUIRE), idx, n;

		__atomic_store_n(comp.consumer, completed, __ATOMIC_RELEASE);
		r.sent += completed - seen;
		free_frames += completed - seen;
		seen = completed;
		n = free_frames < BATCH ? free_frames : BATCH;
		if (n && xsk_ring_prod__reserve(&tx, n, &idx) == n) {
			for (__u32 k = 0; k < n; k++, next = (next + 1) % RING_FRAMES)
				*xsk_ring_prod__tx_desc(&tx, idx + k) = (struct xdp_desc){ .addr = (__u64)next * SLOT,
											 .len = FRAME_LEN };
			xsk_ring_prod__submit(&tx, n);
			free_frames -= n;
		}
		if (sendto(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS) {
			r.error = errno;
			break;
		}
	}
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(area, (size_t)RING_FRAMES * SLOT);
	return r;
}

int main(int argc, char **argv)
{
	struct options opt = { .how = HOW_MMSG, .duration_s = 1.0 };
	bool given[sizeof(table) / sizeof(table[0])] = { 0 };
	__u8 mac[6], frame[128];
	struct result r;
	cpu_set_t set;
	char why[128];
	__u64 start;
	int ifindex, rc = xnf_options_parse(table, argc, argv, &opt, given,
					    "usage: xnf-sender-ref --iface IF --dst-mac MAC --how WAY [options]", &opt);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!opt.iface || !opt.dst_mac || xnf_rules_parse_mac(opt.dst_mac, mac, why, sizeof(why))) {
		xnf_error("--iface and --dst-mac (a MAC address) are required");
		return 2;
	}
	ifindex = (int)if_nametoindex(opt.iface);
	if (!ifindex) {
		xnf_error("no interface '%s' here: check the name (ip link) and the namespace", opt.iface);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(opt.core, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		xnf_error("cannot pin to core %u: give a core this machine has", opt.core);
		return 2;
	}
	build_frame(frame, mac, opt.iface);
	start = xnf_now_ns();
	r = opt.how == HOW_MMSG ? send_mmsg(ifindex, frame, start + (__u64)(opt.duration_s * 1e9)) :
	    opt.how == HOW_TPACKET ? send_tpacket(ifindex, frame, start + (__u64)(opt.duration_s * 1e9)) :
				     send_afxdp(opt.iface, frame, start + (__u64)(opt.duration_s * 1e9));
	if (r.error) {
		xnf_error("sending on %s with %s failed: %s", opt.iface, hows[opt.how], strerror(r.error));
		return 1;
	}
	printf("{\"how\": \"%s\", \"sent\": %llu, \"refused\": %llu, \"seconds\": %.6f}\n", hows[opt.how],
	       (unsigned long long)r.sent, (unsigned long long)r.refused, (xnf_now_ns() - start) / 1e9);
	return 0;
}
