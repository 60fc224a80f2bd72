// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/xdp_instance.h>
#include <xnf/runtime/map_sizes.h>
#include <xnf/runtime/xdp_attach.h>
#include <xnf/runtime/embedded.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/verifier_stats.h>
#include <xnf/internal/native_maps.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERIFIER_TAIL_LINES 20

/*
 * libbpf's messages are kept, not printed: on success they are noise, on a
 * verifier rejection only the last lines of the log say what went wrong.
 */
static char *libbpf_log;
static size_t libbpf_log_len;

static int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *line = NULL, *grown;
	int n;

	/* The verifier's log comes as one message of any length: format it whole. */
	n = vasprintf(&line, fmt, ap);
	if (n <= 0) {
		free(n == 0 ? line : NULL);
		return 0;
	}
	if (xnf_verbose)
		fputs(line, stderr);
	if (level != LIBBPF_DEBUG) {
		grown = realloc(libbpf_log, libbpf_log_len + n + 1);
		if (grown) {
			libbpf_log = grown;
			memcpy(libbpf_log + libbpf_log_len, line, n + 1);
			libbpf_log_len += n;
		}
	}
	free(line);
	return 0;
}

static void print_verifier_tail(void)
{
	const char *start, *end;
	int lines = 0;

	if (!libbpf_log)
		return;
	start = strstr(libbpf_log, "-- BEGIN PROG LOAD LOG --");
	end = strstr(libbpf_log, "-- END PROG LOAD LOG --");
	if (!start || !end || end < start) {
		fprintf(stderr, "%s", libbpf_log);
		return;
	}
	/* Walk back from the end marker to keep the last lines. */
	const char *p = end;

	while (p > start && lines <= VERIFIER_TAIL_LINES) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	fprintf(stderr, "xnf: the verifier's last lines:\n%.*s", (int)(end - p), p);
}

static void reset_libbpf_log(void)
{
	free(libbpf_log);
	libbpf_log = NULL;
	libbpf_log_len = 0;
}

static struct bpf_program *find_entry_program(struct bpf_object *obj, enum xnf_kernel_hook hook)
{
	enum bpf_prog_type type = hook == XNF_AT_TC ? BPF_PROG_TYPE_SCHED_CLS : BPF_PROG_TYPE_XDP;
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__type(prog) == type)
			return prog;
	}
	return NULL;
}

static int fill_port_map(struct xnf_xdp_instance *x)
{
	int fd = bpf_object__find_map_fd_by_name(x->obj, "xnf_ports");

	if (fd < 0)
		return fd;
	for (__u32 i = 0; i < x->nports; i++) {
		__u32 ifindex = (__u32)x->ports[i].ifindex;
		int err = bpf_map_update_elem(fd, &i, &ifindex, BPF_ANY);

		if (err) {
			xnf_error("cannot add port %s to the redirect map: %s", x->ports[i].name,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

/* libbpf's answer when a program reads the kernel's own types (CO-RE: xnf_map_capacity reads a map's size so) and
 * the kernel publishes none. */
static bool kernel_btf_missing(int err)
{
	return err == -ESRCH && !xnf_kernel_has(XNF_KF_BTF);
}

/* The helper the verifier refused the program for, from its log ("unknown func bpf_x#N" before 6.2, "program of
 * this type cannot use helper bpf_x#N" after, "invalid func unknown#N" for an id it does not know); -1 if none. */
static int refused_helper(void)
{
	static const char *const markers[] = { "unknown func ", "cannot use helper ", "invalid func " };
	const char *at, *hash;

	for (size_t i = 0; libbpf_log && i < sizeof(markers) / sizeof(markers[0]); i++) {
		at = strstr(libbpf_log, markers[i]);
		hash = at ? strchr(at, '#') : NULL;
		if (hash)
			return (int)strtol(hash + 1, NULL, 10);
	}
	return -1;
}

static void explain_refused_helper(int id, const char *what)
{
	const struct xnf_helper_info *helper = xnf_helper_by_id(id);

	if (helper)
		xnf_error("cannot load the NF's %s program: this kernel refuses the helper %s in %s programs (%s has "
			  "it; a build can leave it out)", what, helper->name, what, helper->since);
	else
		xnf_error("cannot load the NF's %s program: this kernel refuses BPF helper %d in %s programs", what, id,
			  what);
}

static void explain_load_failure(int err, enum xnf_kernel_hook hook)
{
	const char *what = hook == XNF_AT_TC ? "tc" : "XDP";
	char why[512];
	int helper = refused_helper();

	if (kernel_btf_missing(err)) {
		xnf_error("cannot load the NF's %s program: it reads the kernel's own types (a connection table's size), "
			  "and %s", what, xnf_kernel_refusal(XNF_KF_BTF, why, sizeof(why)));
		return;
	}
	if (helper >= 0) {
		explain_refused_helper(helper, what);
		return;
	}
	if (err == -EPERM || err == -EACCES) {
		if (geteuid() != 0) {
			xnf_error("loading the %s program needs root (CAP_BPF and CAP_NET_ADMIN): run xnf with sudo", what);
			return;
		}
		xnf_error("the kernel's verifier rejected the NF's %s program", what);
		print_verifier_tail();
		return;
	}
	xnf_error("cannot load the NF's %s program: %s", what, strerror(-err));
	print_verifier_tail();
}

/* The NF's own maps, as opposed to the glue's (xnf_*) and libbpf's internal ones (.rodata...). */
static bool is_nf_map(const struct bpf_map *map)
{
	return !bpf_map__is_internal(map) && !xnf_map_is_glue(bpf_map__name(map));
}

/* Whether the kernel's copy of an NF map holds nothing: its NF, or its chain member, runs in user space. */
static bool runs_in_user_space(const struct bpf_map *map, const struct xnf_xdp_plan *plan)
{
	const struct xnf_map *twin;

	if (!is_nf_map(map))
		return false;
	/* Under --state the kernel's twin holds the state whenever no process does: it keeps its size. */
	if (plan->datapath == XNF_DATAPATH_USER && plan->state_dir)
		return false;
	if (plan->datapath == XNF_DATAPATH_USER)
		return true;
	twin = xnf_native_map_find(bpf_map__name(map));
	return plan->datapath == XNF_DATAPATH_SPLIT && twin && twin->chain_position >= plan->chain_split;
}

/* The pre-filter of pure-drop rules (xnf/drop_rules.h): as big as --offload-table, or nothing. */
static bool is_prefilter_map(const struct bpf_map *map)
{
	return strcmp(bpf_map__name(map), "xnf_offload_drops") == 0 ||
	       strcmp(bpf_map__name(map), "xnf_offload_hits") == 0;
}

static int size_maps(struct bpf_object *obj, const struct xnf_xdp_plan *plan, const struct xnf_map_size *sizes,
		     __u32 nsizes)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		__u32 entries = bpf_map__max_entries(map);

		if (bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS)
			continue; /* a rules table's two generations (xnf/rules_tables.h) */

		for (__u32 i = 0; i < nsizes; i++) {
			if (xnf_map_sized_with(bpf_map__name(map), sizes[i].name))
				entries = sizes[i].entries;
		}
		if (runs_in_user_space(map, plan))
			entries = 1;
		if (is_prefilter_map(map))
			entries = plan->offload_table ? plan->offload_table : 1;
		if (bpf_map__set_max_entries(map, entries)) {
			xnf_error("cannot size map %s to %u entries", bpf_map__name(map), entries);
			return -1;
		}
	}
	return 0;
}

/* The dispatcher's local services, after load (its .rodata already says how many). */
static int fill_local_ports(struct bpf_object *obj, const struct xnf_local_dispatch *local)
{
	int fd = bpf_object__find_map_fd_by_name(obj, "xnf_local_ports");
	__u32 one = 1;

	for (__u32 i = 0; local && i < local->nports; i++) {
		int err = fd < 0 ? fd : bpf_map_update_elem(fd, &local->ports[i], &one, BPF_ANY);

		if (err) {
			xnf_error("cannot add a local service to the dispatcher: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

int xnf_xdp_load(struct xnf_xdp_instance *x, const struct xnf_port *ports, __u32 nports, bool generic,
		 const struct xnf_xdp_plan *plan, const struct xnf_map_size *sizes, __u32 nsizes)
{
	const struct xnf_local_dispatch *local = plan->local;
	struct xnf_config cfg = { .nports = nports, .datapath = plan->datapath, .chain_split = plan->chain_split,
				  .offload_drops = plan->offload_table != 0,
				  .local_queues = local ? local->queues : 0, .local_ports = local ? local->nports : 0,
				  .skb_mode = generic, .peer_ports = plan->peer_ports, .frags = plan->frags,
				  .verdict_in_frame = plan->verdict_in_frame,
				  .kernel_fallback = plan->state_dir && (plan->datapath == XNF_DATAPATH_USER ||
									 plan->datapath == XNF_DATAPATH_HYBRID) };
	struct bpf_program *prog;
	int err;

	memset(x, 0, sizeof(*x));
	x->prog_fd = -1;
	x->stats_fd = -1;
	x->generic = generic;
	x->nports = nports;
	for (__u32 i = 0; i < XNF_MAX_PORTS; i++)
		x->link_fds[i] = -1;
	memcpy(x->ports, ports, nports * sizeof(*ports));
	for (__u32 i = 0; i < nports; i++)
		cfg.ifindex[i] = (__u32)ports[i].ifindex;
	x->cfg = cfg;
	x->attach_libxdp = plan->attach_libxdp;
	x->attach_clsact = plan->attach_clsact;
	x->nf_name = plan->nf_name;
	x->libxdp_priority = plan->libxdp_priority;
	x->journal_dir = plan->journal_dir;
	x->hook = plan->hook;

	libbpf_set_print(capture_libbpf);
	reset_libbpf_log();
	x->embedded = xnf_embedded_open(plan->hook);
	if (!x->embedded) {
		xnf_error("cannot open the embedded BPF object: %s", strerror(errno));
		return -1;
	}
	x->obj = xnf_embedded_object(x->embedded);
	xnf_embedded_set_config(x->embedded, &cfg);
	prog = find_entry_program(x->obj, plan->hook);
	if (!prog) {
		xnf_error("the embedded BPF object has no %s program: was the NF built with XNF_DEFINE_NF?",
			  plan->hook == XNF_AT_TC ? "tc" : "XDP");
		return -1;
	}
	if (plan->frags)
		bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_XDP_HAS_FRAGS);
	if (size_maps(x->obj, plan, sizes, nsizes) || (plan->state_dir && xnf_state_adopt_maps(x, plan->state_dir)) ||
	    (plan->verifier_stats && xnf_verifier_stats_ask(prog)))
		return -1;
	err = bpf_object__load(x->obj);
	if (plan->verifier_stats)
		xnf_verifier_stats_say(plan->hook == XNF_AT_TC ? "tc" : "XDP");
	if (err) {
		explain_load_failure(err, plan->hook);
		return -1;
	}
	reset_libbpf_log();
	x->prog_fd = bpf_program__fd(prog);
	x->stats_fd = bpf_object__find_map_fd_by_name(x->obj, "xnf_stats");
	if (fill_local_ports(x->obj, local) || fill_port_map(x))
		return -1;
	/* Kept maps are in force already: their rules and sessions are what the last process left. */
	return plan->held && !x->adopted ? 0 : xnf_xdp_put_in_force(x);
}

int xnf_xdp_put_in_force(struct xnf_xdp_instance *x)
{
	__u32 zero = 0, one = 1;
	int fd = bpf_object__find_map_fd_by_name(x->obj, "xnf_in_force");
	int err = fd < 0 ? -ENOENT : bpf_map_update_elem(fd, &zero, &one, BPF_ANY) ? -errno : 0;

	if (err)
		xnf_error("cannot let frames through to the NF (map xnf_in_force): %s; was it built with this "
			  "version's SDK?", strerror(-err));
	return err ? -1 : 0;
}

int xnf_xdp_attach(struct xnf_xdp_instance *x)
{
	if (x->state_dir[0])
		return xnf_state_attach(x);
	if (x->hook == XNF_AT_TC)
		return xnf_tc_attach_ports(x);
	if (x->attach_libxdp)
		return xnf_libxdp_attach(x, x->journal_dir);
	return xnf_xdp_attach_ports(x->prog_fd, x->ports, x->nports, x->generic, x->link_fds);
}

void xnf_xdp_detach(struct xnf_xdp_instance *x)
{
	xnf_libxdp_detach(x);
	xnf_tc_detach_ports(x);
	xnf_xdp_detach_ports(x->link_fds, x->nports);
}

void xnf_xdp_destroy(struct xnf_xdp_instance *x)
{
	xnf_xdp_detach(x);
	if (x->pinned)
		xnf_xdp_unpin_maps(x);
	xnf_embedded_destroy(x->embedded);
	x->embedded = NULL;
	free(x->state_layout);
	x->state_layout = NULL;
	reset_libbpf_log();
}

int xnf_xdp_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	struct xnf_xdp_instance *x = ctx;
	struct bpf_map *map = bpf_object__find_map_by_name(x->obj, name);

	if (!map)
		return -ENOENT;
	ref->name = bpf_map__name(map);
	ref->fd = bpf_map__fd(map);
	ref->native = NULL;
	ref->key_size = bpf_map__key_size(map);
	ref->value_size = bpf_map__value_size(map);
	ref->max_entries = bpf_map__max_entries(map);
	return 0;
}

int xnf_xdp_read_stats(const struct xnf_xdp_instance *x, struct xnf_counter totals[XNF_STAT_NSLOTS])
{
	int ncpus = libbpf_num_possible_cpus();
	struct xnf_counter *per_cpu;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	memset(totals, 0, sizeof(*totals) * XNF_STAT_NSLOTS);
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++) {
		int err = bpf_map_lookup_elem(x->stats_fd, &slot, per_cpu);

		if (err) {
			free(per_cpu);
			return err;
		}
		for (int cpu = 0; cpu < ncpus; cpu++) {
			totals[slot].packets += per_cpu[cpu].packets;
			totals[slot].bytes += per_cpu[cpu].bytes;
		}
	}
	free(per_cpu);
	return 0;
}

int xnf_xdp_socket_map_fd(const struct xnf_xdp_instance *x)
{
	return x->obj ? bpf_object__find_map_fd_by_name(x->obj, "xnf_xsks") : -1;
}
