// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How each kernel facility is tried for real (the table that names them is kernel_facilities.c): a program loaded,
 * run or attached, a socket bound, an option set. What needs a device runs in a scratch network namespace of its
 * own, on its loopback, so that no probe ever touches a port. Each returns 0 where the kernel gives the facility,
 * else -1 with the kernel's reason in why.
 */
#include "kernel_probes.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel_probe.skel.h"

/* Newer than bookworm's headers: the kernel's values. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
#ifndef XDP_GENERIC_XMIT_BATCH
#define XDP_GENERIC_XMIT_BATCH 10
#endif
#define TCX_INGRESS_ATTACH 46
#define TCX_NEXT (-1)

#define VERIFIER_LOG_BYTES 4096
#define PROBE_UMEM_FRAMES 64
#define PROBE_FRAME_SIZE 4096
#define PROBE_RING_SIZE 64

static int say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(reg, value) INSN(BPF_ALU64 | BPF_MOV | BPF_K, reg, 0, 0, value)
#define CALL_HELPER(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* "return value": a program that does nothing, of type, with options. */
static int load_returning(enum bpf_prog_type type, int value, const struct bpf_prog_load_opts *opts)
{
	struct bpf_insn prog[] = { MOV_IMM(BPF_REG_0, value), EXIT };

	return bpf_prog_load(type, "xnf_probe", "GPL", prog, 2, opts);
}

int xnf_probe_bpf(char *why, size_t len)
{
	int fd = load_returning(BPF_PROG_TYPE_XDP, XDP_PASS, NULL);

	if (fd < 0)
		return say(why, len, "loading an XDP program that only returns XDP_PASS: %s", strerror(errno));
	close(fd);
	return 0;
}

int xnf_probe_btf(char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();

	if (libbpf_get_error(btf))
		return say(why, len, "/sys/kernel/btf/vmlinux cannot be read: it needs a kernel built with "
			   "CONFIG_DEBUG_INFO_BTF=y, as the major distributions' are");
	btf__free(btf);
	return 0;
}

int xnf_probe_live_frames(char *why, size_t len)
{
	__u8 frame[64] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0 };
	int fd = load_returning(BPF_PROG_TYPE_XDP, XDP_DROP, NULL), rc = 0;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame), .repeat = 1,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	if (fd < 0)
		return say(why, len, "cannot load an XDP program to run: %s", strerror(errno));
	if (bpf_prog_test_run_opts(fd, &opts))
		rc = say(why, len, "BPF_PROG_RUN of an XDP_DROP program on one live frame: %s", strerror(errno));
	close(fd);
	return rc;
}

/* The verifier's words for a helper the program type may not call: older kernels', then newer ones'. */
static const char *const HELPER_REFUSALS[] = { "unknown func ", "invalid func ", "cannot use helper" };

/* The line of the verifier's log that refuses the helper (newer kernels print the registers' state first), cut
 * out in place; NULL where none does. */
static char *helper_refusal_line(char *log)
{
	for (size_t i = 0; i < sizeof(HELPER_REFUSALS) / sizeof(HELPER_REFUSALS[0]); i++) {
		char *found = strstr(log, HELPER_REFUSALS[i]), *start = found;

		if (!found)
			continue;
		while (start > log && start[-1] != '\n')
			start--;
		start[strcspn(start, "\n")] = '\0';
		return start;
	}
	return NULL;
}

int xnf_probe_helper(int id, enum bpf_prog_type type, char *why, size_t len)
{
	struct bpf_insn prog[] = { CALL_HELPER(id), MOV_IMM(BPF_REG_0, 0), EXIT };
	char log[VERIFIER_LOG_BYTES] = "", *refusal;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(type, "xnf_probe", "GPL", prog, 3, &opts);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	/* Refused for its arguments, not for itself: the verifier got past the helper's own check. */
	refusal = helper_refusal_line(log);
	if (!refusal)
		return 0;
	return say(why, len, "the verifier: \"%s\"", refusal);
}

int xnf_probe_xdp_frags(char *why, size_t len)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_XDP_HAS_FRAGS);
	int fd = load_returning(BPF_PROG_TYPE_XDP, XDP_PASS, &opts);

	if (fd < 0)
		return say(why, len, "loading an XDP program with BPF_F_XDP_HAS_FRAGS: %s", strerror(errno));
	close(fd);
	return 0;
}

/* ---------------------------------------------------------------- in a scratch namespace */

static int raise_loopback(void)
{
	struct ifreq req = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &req) == 0) {
		req.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &req);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Runs try(lo's ifindex) on this thread in a new network namespace, then comes back to the one it was in; the
 * scratch namespace goes with what the probe made in it. */
static int in_scratch_namespace(int (*try)(int lo, char *why, size_t len), char *why, size_t len)
{
	int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), rc;

	if (home < 0)
		return say(why, len, "cannot open this thread's network namespace: %s", strerror(errno));
	if (unshare(CLONE_NEWNET)) {
		rc = say(why, len, "cannot make a scratch network namespace to probe in: %s", strerror(errno));
		close(home);
		return rc;
	}
	rc = raise_loopback() ? say(why, len, "cannot raise the scratch namespace's loopback: %s", strerror(errno))
			      : try((int)if_nametoindex("lo"), why, len);
	if (setns(home, CLONE_NEWNET)) {
		/* A thread left in the scratch namespace would run everything after on the wrong ports. */
		fprintf(stderr, "xnf: error: cannot return from the kernel probe's namespace: %s\n", strerror(errno));
		abort();
	}
	close(home);
	return rc;
}

static int try_tcx(int lo, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = TCX_INGRESS_ATTACH);
	int prog = load_returning(BPF_PROG_TYPE_SCHED_CLS, TCX_NEXT, &opts), link;

	if (prog < 0)
		return say(why, len, "loading a tc program for TCX ingress: %s", strerror(errno));
	link = bpf_link_create(prog, lo, TCX_INGRESS_ATTACH, NULL);
	close(prog);
	if (link < 0)
		return say(why, len, "a bpf_link at TCX ingress: %s", strerror(-link));
	close(link);
	return 0;
}

int xnf_probe_tcx(char *why, size_t len)
{
	return in_scratch_namespace(try_tcx, why, len);
}

static int try_clsact(int lo, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lo, .attach_point = BPF_TC_INGRESS);
	int prog = load_returning(BPF_PROG_TYPE_SCHED_CLS, 0, NULL), err;

	if (prog < 0)
		return say(why, len, "loading a tc program: %s", strerror(errno));
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog);
	err = bpf_tc_hook_create(&hook);
	if (!err)
		err = bpf_tc_attach(&hook, &opts);
	close(prog);
	return err ? say(why, len, "a clsact qdisc with a BPF filter: %s", strerror(-err)) : 0;
}

int xnf_probe_clsact(char *why, size_t len)
{
	return in_scratch_namespace(try_clsact, why, len);
}

int xnf_probe_afxdp(char *why, size_t len)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return say(why, len, "socket(AF_XDP): %s", strerror(errno));
	close(fd);
	return 0;
}

/* An AF_XDP socket with its UMEM and rings, bound in copy mode with flags to queue 0 of ifindex. */
static int bind_xsk(int fd, void *area, int ifindex, __u16 flags)
{
	struct xdp_umem_reg reg = { .addr = (__u64)(unsigned long)area, .len = PROBE_UMEM_FRAMES * PROBE_FRAME_SIZE,
				    .chunk_size = PROBE_FRAME_SIZE };
	struct sockaddr_xdp at = { .sxdp_family = AF_XDP, .sxdp_ifindex = (__u32)ifindex, .sxdp_flags = flags };
	int ring = PROBE_RING_SIZE;

	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)))
		return -1;
	return bind(fd, (struct sockaddr *)&at, sizeof(at));
}

static int try_afxdp_sg(int lo, char *why, size_t len)
{
	void *area = mmap(NULL, PROBE_UMEM_FRAMES * PROBE_FRAME_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), rc = 0;

	if (area == MAP_FAILED || fd < 0)
		rc = say(why, len, "an AF_XDP socket and its UMEM: %s", strerror(errno));
	else if (bind_xsk(fd, area, lo, XDP_COPY | XDP_USE_SG))
		rc = say(why, len, "binding an AF_XDP socket with XDP_USE_SG: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	if (area != MAP_FAILED)
		munmap(area, PROBE_UMEM_FRAMES * PROBE_FRAME_SIZE);
	return rc;
}

int xnf_probe_afxdp_sg(char *why, size_t len)
{
	return in_scratch_namespace(try_afxdp_sg, why, len);
}

/* An AF_XDP socket option of the transmit ring, set to 32 on a socket with a ring of 64: the smallest value the
 * kernels that know them take. */
static int try_xsk_option(int option, const char *name, char *why, size_t len)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), value = 32, ring = PROBE_RING_SIZE, rc = 0;

	if (fd < 0)
		return say(why, len, "socket(AF_XDP): %s", strerror(errno));
	if (setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)))
		rc = say(why, len, "an AF_XDP socket's transmit ring: %s", strerror(errno));
	else if (setsockopt(fd, SOL_XDP, option, &value, sizeof(value)))
		rc = say(why, len, "setsockopt(%s) on an AF_XDP socket: %s", name, strerror(errno));
	close(fd);
	return rc;
}

int xnf_probe_xsk_tx_budget(char *why, size_t len)
{
	return try_xsk_option(XDP_MAX_TX_SKB_BUDGET, "XDP_MAX_TX_SKB_BUDGET", why, len);
}

int xnf_probe_xsk_xmit_batch(char *why, size_t len)
{
	return try_xsk_option(XDP_GENERIC_XMIT_BATCH, "XDP_GENERIC_XMIT_BATCH", why, len);
}

int xnf_probe_busy_poll(char *why, size_t len)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1, rc = 0;

	if (fd < 0)
		return say(why, len, "a UDP socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)))
		rc = say(why, len, "setsockopt(SO_PREFER_BUSY_POLL): %s", strerror(errno));
	close(fd);
	return rc;
}

/* ---------------------------------------------------------------- compiled probe programs */

/* The probe object with only the program pick names loaded (aimed at target_fd's function where >= 0); NULL with
 * why said. */
static struct kernel_probe_bpf *open_with_only(struct bpf_program *(*pick)(struct kernel_probe_bpf *),
					       int target_fd, char *why, size_t len)
{
	struct kernel_probe_bpf *skel = kernel_probe_bpf__open();
	struct bpf_program *prog, *keep;

	if (!skel) {
		say(why, len, "cannot open the probe's BPF object: %s", strerror(errno));
		return NULL;
	}
	keep = pick(skel);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == keep);
	if (target_fd >= 0 && bpf_program__set_attach_target(keep, target_fd, "xnf_probe_target")) {
		say(why, len, "cannot aim the freplace program at its target: %s", strerror(errno));
		kernel_probe_bpf__destroy(skel);
		return NULL;
	}
	if (kernel_probe_bpf__load(skel)) {
		say(why, len, "loading the %s program: %s", bpf_program__section_name(keep), strerror(errno));
		kernel_probe_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static struct bpf_program *pick_target(struct kernel_probe_bpf *s) { return s->progs.xnf_probe_xdp; }
static struct bpf_program *pick_ext(struct kernel_probe_bpf *s) { return s->progs.xnf_probe_ext; }
static struct bpf_program *pick_tp(struct kernel_probe_bpf *s) { return s->progs.xnf_probe_tp; }

int xnf_probe_freplace(char *why, size_t len)
{
	struct kernel_probe_bpf *target = open_with_only(pick_target, -1, why, len), *ext;
	struct bpf_link *link;
	int target_fd, rc = -1;

	if (!target)
		return -1;
	target_fd = bpf_program__fd(target->progs.xnf_probe_xdp);
	ext = open_with_only(pick_ext, target_fd, why, len);
	if (ext) {
		link = bpf_program__attach_freplace(ext->progs.xnf_probe_ext, target_fd, "xnf_probe_target");
		rc = link ? 0 : say(why, len, "attaching an freplace program: %s", strerror(errno));
		bpf_link__destroy(link);
		kernel_probe_bpf__destroy(ext);
	}
	kernel_probe_bpf__destroy(target);
	return rc;
}

int xnf_probe_tp_btf(char *why, size_t len)
{
	struct kernel_probe_bpf *skel = open_with_only(pick_tp, -1, why, len);
	struct bpf_link *link;
	int rc;

	if (!skel)
		return -1;
	link = bpf_program__attach(skel->progs.xnf_probe_tp);
	rc = link ? 0 : say(why, len, "attaching a tp_btf program to xdp_exception: %s", strerror(errno));
	bpf_link__destroy(link);
	kernel_probe_bpf__destroy(skel);
	return rc;
}
