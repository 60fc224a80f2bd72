// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --attach libxdp: the NF joins libxdp's multi-program dispatcher on each port, in front of or behind other
 * programs (xdp-filter, Suricata, another xnf...) by its run priority, instead of taking the XDP hook alone.
 *
 * The instance has already loaded its object and filled its maps (rules, sockets, ports). libxdp must load the
 * program it attaches itself (as an extension of its dispatcher), so each port gets a second copy of the
 * embedded object whose maps are the loaded object's own (bpf_map__reuse_fd): the copy runs on the same maps,
 * rules and counters, and nothing runs before the rules are in.
 *
 * libxdp keeps a dispatcher's links pinned in bpffs, so they outlive a killed process. Each attachment is
 * written down in the run directory (.NETNS-IF-libxdp-PROGID, holding the pid); every start on that interface
 * removes what a dead instance left behind.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <xnf/runtime/embedded.h>
#include <xnf/runtime/bpffs.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/xdp_instance.h>

#define JOURNAL_TAG "libxdp"

struct libxdp_port {
	struct xnf_embedded *copy;
	struct xdp_program *prog;
	char journal[300];
};

struct xnf_libxdp {
	struct libxdp_port ports[XNF_MAX_PORTS];
	__u32 nports;
};

static enum xdp_attach_mode attach_mode(const struct xnf_xdp_instance *x)
{
	return x->generic ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

/* libxdp reads its dispatcher's state from bpffs: without one it cannot add a program beside another. */
static int check_bpffs(void)
{
	const char *dir = getenv("LIBXDP_BPFFS");

	if (!dir || !*dir)
		dir = "/sys/fs/bpf";
	if (xnf_on_bpffs(dir))
		return 0;
	xnf_error("--attach libxdp needs bpffs, where libxdp keeps its dispatcher's links, and %s is not one "
		  "('ip netns exec' remounts /sys): mount one (mount -t bpf bpf /sys/fs/bpf) that every program on "
		  "this interface sees, or point LIBXDP_BPFFS at one", dir);
	return -1;
}

static unsigned long netns_inode(void)
{
	struct stat ns;

	return stat("/proc/self/ns/net", &ns) ? 0 : (unsigned long)ns.st_ino;
}

/* The journal's prefix for one interface in this network namespace (names are per namespace). */
static void journal_prefix(char *out, size_t len, const char *ifname)
{
	snprintf(out, len, ".%lu-%s-" JOURNAL_TAG "-", netns_inode(), ifname);
}

static void write_journal(struct libxdp_port *p, const char *dir, const char *ifname)
{
	char prefix[128], pid[32];
	int fd, n;

	p->journal[0] = '\0';
	if (!dir)
		return;
	journal_prefix(prefix, sizeof(prefix), ifname);
	snprintf(p->journal, sizeof(p->journal), "%s/%s%u", dir, prefix, xdp_program__id(p->prog));
	fd = open(p->journal, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, pid, (size_t)n) != n)
		xnf_warn("cannot note the libxdp attachment in %s (%s): if this instance is killed, remove its program "
			 "from %s by hand", p->journal, strerror(errno), ifname);
	if (fd >= 0)
		close(fd);
}

/* Detaches one program that a dead instance left in the dispatcher of port. */
static void remove_leftover(const struct xnf_port *port, __u32 prog_id, int pid)
{
	struct xdp_program *prog = xdp_program__from_id(prog_id);
	int err = libxdp_get_error(prog);

	if (err)
		return; /* gone already */
	err = xdp_program__detach(prog, port->ifindex, XDP_MODE_NATIVE, 0);
	if (err)
		err = xdp_program__detach(prog, port->ifindex, XDP_MODE_SKB, 0);
	if (err)
		xnf_warn("%s: cannot remove program %u that instance %d left in libxdp's dispatcher: %s", port->name,
			 prog_id, pid, strerror(-err));
	else
		xnf_warn("%s: removed program %u that instance %d (killed) left in libxdp's dispatcher", port->name,
			 prog_id, pid);
	xdp_program__close(prog);
}

void xnf_libxdp_recover(const char *dir, const struct xnf_port *port)
{
	char prefix[128], path[600];
	struct dirent *e;
	DIR *d;

	if (!dir || !(d = opendir(dir)))
		return;
	journal_prefix(prefix, sizeof(prefix), port->name);
	while ((e = readdir(d))) {
		unsigned prog_id;
		int pid = 0;
		FILE *f;

		if (strncmp(e->d_name, prefix, strlen(prefix)) || sscanf(e->d_name + strlen(prefix), "%u", &prog_id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
		if (pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH))
			continue; /* its instance runs */
		remove_leftover(port, prog_id, pid);
		unlink(path);
	}
	closedir(d);
}

/* A copy of the embedded object whose maps are the loaded object's: what libxdp loads and attaches. */
static struct xnf_embedded *open_sharing_copy(const struct xnf_xdp_instance *x)
{
	struct xnf_embedded *copy = xnf_embedded_open(XNF_AT_XDP);
	struct bpf_map *map;

	if (!copy) {
		xnf_error("cannot open a copy of the embedded BPF object: %s", strerror(errno));
		return NULL;
	}
	xnf_embedded_set_config(copy, &x->cfg);
	bpf_object__for_each_map(map, xnf_embedded_object(copy)) {
		const struct bpf_map *mine = bpf_object__find_map_by_name(x->obj, bpf_map__name(map));
		int err = mine ? bpf_map__reuse_fd(map, bpf_map__fd(mine)) : -ENOENT;

		if (err) {
			xnf_error("cannot share map %s with the program libxdp attaches: %s", bpf_map__name(map),
				  strerror(-err));
			xnf_embedded_destroy(copy);
			return NULL;
		}
	}
	return copy;
}

/* libxdp falls back to attaching a program alone when the kernel refuses its dispatcher; it says so only in a
 * log line. A program alone takes the hook as surely as a bpf_link does, so it is not what was asked for. */
static bool attached_alone(const struct xnf_port *port)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(port->ifindex);
	bool alone = !libxdp_get_error(mp) && xdp_multiprog__is_legacy(mp);

	if (!libxdp_get_error(mp))
		xdp_multiprog__close(mp);
	return alone;
}

static int attach_port(struct xnf_xdp_instance *x, struct libxdp_port *p, const struct xnf_port *port,
		       const char *journal_dir)
{
	char why[256];
	int err;

	p->copy = open_sharing_copy(x);
	if (!p->copy)
		return -1;
	p->prog = xdp_program__from_bpf_obj(xnf_embedded_object(p->copy), "xdp");
	err = libxdp_get_error(p->prog);
	if (!err)
		err = xdp_program__set_run_prio(p->prog, x->libxdp_priority);
	if (!err)
		err = xdp_program__attach(p->prog, port->ifindex, attach_mode(x), 0);
	if (err) {
		libxdp_strerror(err, why, sizeof(why));
		xnf_error("cannot attach to %s through libxdp's dispatcher: %s%s", port->name, why,
			  err == -EEXIST || err == -EBUSY ? " (a program that is not libxdp's holds the interface: "
			  "it must be attached through libxdp too)" : "");
		if (!libxdp_get_error(p->prog))
			xdp_program__close(p->prog);
		p->prog = NULL;
		return -1;
	}
	write_journal(p, journal_dir, port->name);
	if (attached_alone(port)) {
		xnf_error("cannot join libxdp's dispatcher on %s: this kernel refuses the extension programs "
			  "(BPF_PROG_TYPE_EXT, freplace) a dispatcher is made of, so libxdp attached the NF alone, which "
			  "leaves no room for other programs: use --attach link here (see docs/operations.md)",
			  port->name);
		return -1;
	}
	return 0;
}

int xnf_libxdp_attach(struct xnf_xdp_instance *x, const char *journal_dir)
{
	if (check_bpffs())
		return -1;
	libxdp_set_print(NULL); /* its log lines would come before, and say less than, the one message below */
	x->libxdp = calloc(1, sizeof(*x->libxdp));
	if (!x->libxdp)
		return -1;
	for (__u32 i = 0; i < x->nports; i++) {
		x->libxdp->nports = i + 1;
		if (attach_port(x, &x->libxdp->ports[i], &x->ports[i], journal_dir)) {
			xnf_libxdp_detach(x);
			return -1;
		}
	}
	return 0;
}

void xnf_libxdp_detach(struct xnf_xdp_instance *x)
{
	if (!x->libxdp)
		return;
	for (__u32 i = 0; i < x->libxdp->nports; i++) {
		struct libxdp_port *p = &x->libxdp->ports[i];

		if (p->prog) {
			int err = xdp_program__detach(p->prog, x->ports[i].ifindex, attach_mode(x), 0);

			if (err)
				xnf_warn("cannot detach from libxdp's dispatcher on %s: %s", x->ports[i].name,
					 strerror(-err));
			else if (p->journal[0])
				unlink(p->journal);
			xdp_program__close(p->prog);
		}
		xnf_embedded_destroy(p->copy);
	}
	free(x->libxdp);
	x->libxdp = NULL;
}
