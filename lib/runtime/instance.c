// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The life of an instance: everything a user can get wrong is checked before
 * the kernel is touched; then load, attach held (frames dropped and counted), rules, sockets, in force;
 * then the control socket, served until a signal; then detach first (no packet goes to a closing
 * socket), stop the workers, restore settings, remove the socket.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xnf/internal/native_maps.h>
#include <xnf/control.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/map_sizes.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/rules_generations.h>
#include <xnf/rules_tables.h>

#include "capture_session.h"
#include "instance.h"
#include "state_handover.h"

#define HOUSEKEEPING_INTERVAL_S 1
/* Entries of the workers' tables copied on to the kernel's each second under --state (state_sync). */
#define STATE_SYNC_PER_INTERVAL 32768

/* A split chain's maps: each member's on the side that runs it (its native twin records its position). */
static int resolve_split_map(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	struct instance *in = ctx;
	const struct xnf_map *twin = xnf_native_map_find(name);

	/* The rules' generation is the kernel's here; the rules engine writes the workers' too (user_side). */
	if (strcmp(name, XNF_RULES_GENERATION_MAP_NAME) == 0 || (twin && twin->chain_position < in->opt->chain_split))
		return xnf_xdp_resolve_map(&in->xdp, name, ref);
	return xnf_native_resolve_map(NULL, name, ref);
}

/* The maps on the side(s) that run the NF. */
static struct xnf_rules_target sides_of(struct instance *in)
{
	switch (in->mode->datapath) {
	case XNF_DATAPATH_USER:
		return (struct xnf_rules_target){ .resolve = xnf_native_resolve_map, .ctx = NULL };
	case XNF_DATAPATH_SPLIT:
		return (struct xnf_rules_target){ .resolve = resolve_split_map, .ctx = in };
	default:
		return (struct xnf_rules_target){ .resolve = xnf_xdp_resolve_map, .ctx = &in->xdp };
	}
}

struct xnf_rules_target xnf_instance_maps(struct instance *in)
{
	in->rules_view = (struct xnf_rules_view){
		.sides = sides_of(in),
		.user_side = in->mode->datapath == XNF_DATAPATH_SPLIT ? xnf_native_resolve_map : NULL,
	};
	return xnf_rules_view_target(&in->rules_view);
}

static int make_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC);
}

/* Whether the NF's tables are the workers' own (native maps): the AF_XDP modes; hybrid's are the kernel's. */
static bool tables_in_workers(const struct instance *in)
{
	return in->mode->datapath == XNF_DATAPATH_USER;
}

/* A port deleted under the instance (or gone with its peer's namespace): its name, or NULL if all are there. */
static const char *port_gone(const struct instance *in)
{
	char name[IF_NAMESIZE];

	for (__u32 i = 0; i < in->xdp.nports; i++) {
		if (!if_indextoname((unsigned int)in->xdp.ports[i].ifindex, name))
			return in->xdp.ports[i].name;
	}
	return NULL;
}

/* Once a second: the NF's own step (expiring sessions...) and the runtime's (ports' transmit paths). 0, or -1
 * when the instance cannot go on. */
static int housekeeping(struct instance *in, const struct xnf_rules_target *rules)
{
	const char *gone = port_gone(in);

	if (gone) {
		xnf_error("interface %s disappeared (deleted, or its veth peer's namespace removed): stopping", gone);
		return -1;
	}
	if (xnf_nf_housekeeping)
		xnf_nf_housekeeping(rules);
	if (in->state_kept && in->afxdp && tables_in_workers(in))
		state_sync(&in->xdp, STATE_SYNC_PER_INTERVAL);
	xnf_afxdp_refresh(in->afxdp);
	port_guard_follow(&in->ports);
	return 0;
}

static int start_capture(void *ctx, int fd, const char *args, char *err, size_t errlen)
{
	return capture_session_start(ctx, fd, args, err, errlen);
}

static void withdraw_offloaded_drops(void *ctx)
{
	drop_offload_withdraw_all(((struct instance *)ctx)->offload);
}

/* Workers whose state is kept: the kernel's twins made equal to their tables once the rules are in force (and after
 * every reload), so that if the process is killed the redirect program's fallback has them (state_sync keeps them up
 * to date after). */
static int keep_tables_in_kernel(struct instance *in)
{
	return in->state_kept && tables_in_workers(in) ? state_export(&in->xdp, false) : 0;
}

/* The --rules file read again and put in force in place of the rules it held (xnf_rules_replace_file): what
 * SIGHUP and the control socket's "reload" do. 0 with what changed in out (or on stdout), or -1 with why in err:
 * the rules in force are then unchanged. */
static int reload_rules(void *ctx, FILE *out, char *err, size_t errlen)
{
	struct instance *in = ctx;
	struct xnf_rules_target target = xnf_instance_maps(in);
	struct xnf_rules_file *next;
	struct stat st;
	int count, removed;

	if (!in->opt->rules) {
		snprintf(err, errlen, "this instance was started without --rules: there is no file to read again");
		return -1;
	}
	if (stat(in->opt->rules, &st)) {
		snprintf(err, errlen, "cannot read %s again: %s", in->opt->rules, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the rules came from %s, a pipe or a device, which cannot be read again: start "
			 "the instance with a rules file to reload it", in->opt->rules);
		return -1;
	}
	next = xnf_rules_read_file(in->opt->rules, err, errlen);
	if (!next)
		return -1;
	withdraw_offloaded_drops(in);
	count = xnf_rules_replace_file(in->rules, next, &target, &removed, err, errlen);
	if (count < 0) {
		xnf_rules_free_file(next);
		return -1;
	}
	xnf_rules_free_file(in->rules);
	in->rules = next;
	fprintf(out, "reloaded %s: %d rules in force, %d deleted\n", in->opt->rules, count, removed);
	/* The kernel's twins follow at once: state_sync carries new entries only, and a reload switched generation. */
	if (keep_tables_in_kernel(in))
		fprintf(out, "the kernel's copy of the tables is behind until the next stop (see the message above)\n");
	return 0;
}

/* SIGHUP: the rules reloaded, said on stdout, or why not on stderr (the instance goes on either way). */
static void reload_on_signal(struct instance *in)
{
	char err[1024] = "";

	if (reload_rules(in, stdout, err, sizeof(err)))
		xnf_error("not reloaded: %s; the rules in force are unchanged", err);
	fflush(stdout);
}

/* Returns 0 on a signal to stop, -1 when the instance had to stop. */
static int serve_until_signal(struct instance *in, int sig_fd)
{
	const struct xnf_control_handlers handlers = {
		.ctx = in,
		.info = xnf_report_info,
		.stats = xnf_report_stats,
		.frames = xnf_report_frames,
		.rules = xnf_instance_maps(in),
		.before_rules_change = withdraw_offloaded_drops,
		.capture = start_capture,
		.reload = reload_rules,
	};
	struct pollfd fds[2 + XNF_CONTROL_MAX_CLIENTS] = { { .fd = sig_fd, .events = POLLIN } };
	struct timespec now, next_housekeeping;

	clock_gettime(CLOCK_MONOTONIC, &next_housekeeping);
	for (;;) {
		int timeout_ms = HOUSEKEEPING_INTERVAL_S * 1000, control_ms = xnf_control_timeout_ms(&in->control);
		unsigned ncontrol = xnf_control_pollfds(&in->control, fds + 1);

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec >= next_housekeeping.tv_sec) {
			if (housekeeping(in, &handlers.rules))
				return -1;
			next_housekeeping.tv_sec = now.tv_sec + HOUSEKEEPING_INTERVAL_S;
		}
		/* The offload controller looks when its interval has passed, and says when it wants to look next. */
		if (in->offload) {
			int offload_ms = drop_offload_tick(in->offload);

			if (offload_ms < timeout_ms)
				timeout_ms = offload_ms;
		}
		if (control_ms >= 0 && control_ms < timeout_ms)
			timeout_ms = control_ms;
		if (poll(fds, 1 + ncontrol, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			xnf_error("poll failed: %s", strerror(errno));
			return -1;
		}
		if (fds[0].revents) {
			struct signalfd_siginfo info;

			if (read(sig_fd, &info, sizeof(info)) == sizeof(info) && info.ssi_signo == SIGHUP) {
				reload_on_signal(in);
				continue;
			}
			return 0;
		}
		xnf_control_serve(&in->control, fds + 1, ncontrol, &handlers);
	}
}

/* The --rules file, read once before the kernel is touched (a pipe or /dev/stdin can be read only once, and
 * a FIFO with no writer must be waited for while Ctrl-C still works). */
static int read_rules_early(struct instance *in)
{
	char err[1024];

	if (!in->opt->rules)
		return 0;
	in->rules = xnf_rules_read_file(in->opt->rules, err, sizeof(err));
	if (!in->rules) {
		xnf_error("%s", err);
		return -1;
	}
	return 0;
}

static int load_rules(struct instance *in)
{
	struct xnf_rules_target target = xnf_instance_maps(in);
	char err[1024];
	int n;

	if (!in->rules)
		return 0;
	n = xnf_rules_apply_file(in->rules, &target, err, sizeof(err));
	if (n < 0) {
		xnf_error("%s", err);
		return -1;
	}
	xnf_info("loaded %d rules from %s", n, in->opt->rules);
	return 0;
}

/* The NF's own options (--fib kernel), as the rule lines they stand for. */
static int apply_option_rules(struct instance *in)
{
	struct xnf_rules_target target = xnf_instance_maps(in);
	char err[1024];

	for (__u32 i = 0; i < in->opt->noption_rules; i++) {
		if (xnf_rules_add(in->opt->option_rules[i], &target, err, sizeof(err))) {
			xnf_error("--%s: %s", in->opt->option_names[i], err);
			return -1;
		}
	}
	return 0;
}

static int run_start_step(struct instance *in)
{
	struct xnf_rules_target target = xnf_instance_maps(in);
	char err[1024] = "";

	if (!xnf_nf_start || xnf_nf_start(&target, err, sizeof(err)) == 0)
		return 0;
	xnf_error("%s cannot start: %s", xnf_nf_name, err);
	return -1;
}

/* A size for a part of a connection table (xnf/runtime/map_sizes.h): refused, saying which map to size. */
static bool part_of_a_table(const char *name)
{
	char table[128];
	enum xnf_ct_part part = xnf_ct_table_part(name, table, sizeof(table));

	if (part == XNF_CT_NOT_A_PART || !xnf_native_map_find(table))
		return false;
	if (part == XNF_CT_PART_RING)
		xnf_error("--map-size: %s is the ring of %s's newest connections and has its size: give %s's size "
			  "instead", name, table, table);
	else if (part == XNF_CT_PART_WINDOWS)
		xnf_error("--map-size: %s holds the TCP windows of %s's connections and has its size: give %s's size "
			  "instead", name, table, table);
	else
		xnf_error("--map-size: %s is a part of the connection table %s and has a fixed size: give %s's size "
			  "instead", name, table, table);
	return true;
}

int xnf_size_native_maps(const struct run_options *opt)
{
	for (__u32 i = 0; i < opt->nmap_sizes; i++) {
		const char *name = opt->map_sizes[i].name;
		struct xnf_map *map;
		bool found = false;

		if (part_of_a_table(name))
			return -1;

		for (size_t at = 0; (map = xnf_native_map_at(at)); at++) {
			if (xnf_map_sized_with(map->name, name) && !xnf_map_is_glue(map->name)) {
				map->max_entries = opt->map_sizes[i].entries;
				found = found || strcmp(map->name, name) == 0;
			}
		}
		if (!found) {
			xnf_error("--map-size: %s has no map called '%s' (see xnf-%s describe for its maps)",
				  xnf_nf_name, name, xnf_nf_name);
			return -1;
		}
	}
	return 0;
}

/* The native twin of the BPF object's .rodata: ports as the NF's xnf_forward() sees them. */
static int prepare_native_side(const struct instance *in, const struct xnf_port *ports, __u32 nports)
{
	int err;

	xnf_cfg.nports = nports;
	xnf_cfg.datapath = in->mode->datapath;
	xnf_cfg.chain_split = in->opt->chain_split;
	xnf_cfg.offload_drops = in->opt->offload.enabled;
	for (__u32 i = 0; i < nports; i++)
		xnf_cfg.ifindex[i] = (__u32)ports[i].ifindex;
	err = xnf_native_maps_init(in->mode->sockets ? in->opt->afxdp.workers : 1);
	if (err)
		xnf_error("cannot create the NF's user-space maps: %s", strerror(-err));
	return err;
}

/* The program learns whether to finish unfinished checksums before it is attached. At tc the skb keeps its
 * checksum state: nothing to finish. */
static int arm_checksum_finishing(struct instance *in)
{
	int fd = bpf_object__find_map_fd_by_name(in->xdp.obj, "xnf_finish_csum");

	if (in->mode->hook == XNF_AT_TC)
		return 0;
	if (fd < 0) {
		xnf_error("the NF's program has no xnf_finish_csum map: was it built with this version's SDK?");
		return -1;
	}
	port_guard_arm(&in->ports, fd, bpf_object__find_map_fd_by_name(in->xdp.obj, "xnf_tx_by_redirect"));
	return 0;
}

/* Where the NF's own program sends frames (native XDP or tc, the NF in the kernel), their fate after the verdict is
 * counted; a kernel that does not allow it leaves them uncounted, and says so. */
static void watch_egress(struct instance *in)
{
	char why[320];

	if (in->mode->generic || in->mode->datapath == XNF_DATAPATH_USER)
		return;
	in->egress = xnf_egress_watch_open(in->xdp.ports, in->xdp.nports,
					   bpf_object__find_map_fd_by_name(in->xdp.obj, "xnf_ports"),
					   in->mode->hook == XNF_AT_TC, why, sizeof(why));
	if (!in->egress)
		xnf_warn("frames the kernel drops after the NF's verdict will not be counted (the egress watch): %s", why);
}

static int start_sockets(struct instance *in)
{
	struct xnf_afxdp_config cfg = in->opt->afxdp;

	if (!in->mode->sockets)
		return 0;
	/* Where the program takes frames of several buffers, so do the sockets. */
	cfg.multi_buffer = in->plan->frags;
	cfg.verdict_in_frame = in->plan->verdict_in_frame;
	in->afxdp = xnf_afxdp_create(&cfg, in->xdp.ports, in->xdp.nports, xnf_xdp_socket_map_fd(&in->xdp));
	if (!in->afxdp || xnf_afxdp_start(in->afxdp))
		return -1;
	return 0;
}

static int start_offload(struct instance *in)
{
	if (!in->opt->offload.enabled)
		return 0;
	in->offload = drop_offload_start(&in->opt->offload, &in->xdp);
	return in->offload ? 0 : -1;
}

static void print_ready(const struct instance *in)
{
	printf("xnf: %s running as '%s' in %s mode on", xnf_nf_name, in->opt->name, in->mode->name);
	for (__u32 i = 0; i < in->xdp.nports; i++)
		printf(" %s", in->xdp.ports[i].name);
	if (in->afxdp) {
		printf(" (%u worker%s, %s; sending", xnf_afxdp_nworkers(in->afxdp),
		       xnf_afxdp_nworkers(in->afxdp) == 1 ? "" : "s",
		       xnf_afxdp_zerocopy(in->afxdp) ? "zero-copy" : "copy mode");
		for (__u32 i = 0; i < in->xdp.nports; i++)
			printf("%s %s: %s", i ? "," : "", in->xdp.ports[i].name,
			       xnf_tx_path_name(xnf_afxdp_tx_path(in->afxdp, i)));
		printf(")");
	}
	if (in->xdp.adopted)
		printf("; took over the program, rules and sessions kept in %s", in->opt->state_dir);
	if (in->plan->frags)
		printf("; takes jumbo frames (in several buffers)");
	printf("; control socket %s; Ctrl-C stops it\n", in->control.path);
	fflush(stdout);
}

/* Once attached under --state, the links are kept: whatever happens next, the stop leaves the program on. */
static int note_state_kept(struct instance *in)
{
	in->state_kept = in->opt->state_dir != NULL;
	return 0;
}


/* The usual order: attached held (frames dropped and counted as not_ready), then rules and sockets. */
static int start_in_order(struct instance *in)
{
	return xnf_xdp_attach(&in->xdp) || note_state_kept(in) || load_rules(in) || apply_option_rules(in) ||
	       run_start_step(in) || start_sockets(in) || keep_tables_in_kernel(in) ? -1 : 0;
}

/* Workers taking over kept state: the kernel build forwards on the kept tables until the workers hold them and
 * run; then the links move to the sockets, and what the kernel build added meanwhile follows. */
static int start_on_kept_state(struct instance *in)
{
	return state_import(&in->xdp, false) || load_rules(in) || apply_option_rules(in) || run_start_step(in) ||
	       start_sockets(in) || xnf_xdp_attach(&in->xdp) || note_state_kept(in) || state_import(&in->xdp, true) ||
	       keep_tables_in_kernel(in) ? -1 : 0;
}

/* Workers whose state is kept hand their tables to the kernel and take their sockets out of the program's way, which
 * then runs the NF itself (afxdp) or sends what they would have (hybrid); they finish what their rings hold. */
static void hand_over_to_kernel(struct instance *in)
{
	if (!in->state_kept || !in->afxdp)
		return;
	if (!tables_in_workers(in)) {
		state_leave_sockets(&in->xdp, in->afxdp);
		return;
	}
	if (state_hand_to_kernel(&in->xdp, in->afxdp) == 0) {
		printf("xnf: %s's tables handed to the kernel, where its program runs the NF on them now\n", xnf_nf_name);
		return;
	}
	xnf_error("the tables could not all be handed to the kernel: as after a kill, its program runs the NF on the copy "
		  "kept in %s/maps, which may miss what changed in the last second; the next start with --state %s takes "
		  "it back (or rm -r %s takes it off)", in->opt->state_dir, in->opt->state_dir, in->opt->state_dir);
}

static void tear_down(struct instance *in)
{
	hand_over_to_kernel(in);
	capture_session_stop(in);
	xnf_xdp_detach(&in->xdp);
	xnf_egress_watch_close(in->egress);
	in->egress = NULL;
	xnf_afxdp_destroy(in->afxdp);
	in->afxdp = NULL;
	drop_offload_stop(in->offload);
	in->offload = NULL;
	xnf_xdp_destroy(&in->xdp);
	xnf_native_maps_free();
	xnf_control_close(&in->control);
	xnf_rules_free_file(in->rules);
	in->rules = NULL;
	if (in->opt->state_dir && in->xdp.state_dir[0] && in->state_kept) {
		port_guard_leave(&in->ports);
		printf("xnf: %s stays attached with its maps in %s: the next start with --state %s takes it over; "
		       "rm -r %s takes it off\n", xnf_nf_name, in->opt->state_dir, in->opt->state_dir,
		       in->opt->state_dir);
		fflush(stdout);
		return;
	}
	port_guard_stop(&in->ports);
}

/* --tc-send peer: the ports whose peer is in another namespace, where the kernel lets tc call bpf_redirect_peer;
 * else none, said once: the frames go out of the port instead (bpf_redirect), a trip through the backlog more. */
static __u32 sending_to_peers(struct instance *in)
{
	__u32 ports = port_guard_peer_ports(&in->ports);
	char why[512];

	if (!ports || xnf_kernel_has_helper(BPF_FUNC_redirect_peer))
		return ports;
	xnf_info("sending out of the ports (--tc-send device), not to their peers: %s",
		 xnf_kernel_helper_refusal(BPF_FUNC_redirect_peer, why, sizeof(why)));
	return 0;
}

/* A port whose MTU brings frames longer than a page: XDP takes them as several buffers, and the sockets as several
 * descriptors, where the kernel has both. 0, or -1 after one message. */
static int check_kernel_takes_jumbo_frames(const struct mode_info *mode)
{
	enum xnf_facility missing = !xnf_kernel_has(XNF_KF_XDP_FRAGS) ? XNF_KF_XDP_FRAGS : XNF_KF_AFXDP_SG;
	char why[512];

	if (xnf_kernel_has(XNF_KF_XDP_FRAGS) && (!mode->sockets || xnf_kernel_has(XNF_KF_AFXDP_SG)))
		return 0;
	xnf_error("a port's MTU brings frames longer than a page, and %s: lower the ports' MTU to what a page holds, or "
		  "run --mode tc", xnf_kernel_refusal(missing, why, sizeof(why)));
	return -1;
}

int xnf_instance_run(const struct run_options *opt, const struct mode_info *mode)
{
	struct instance in = { .opt = opt, .mode = mode, .control = { .listen_fd = -1 } };
	const char *run_dir = xnf_run_dir(opt->run_dir);
	struct xnf_xdp_plan plan = { .datapath = mode->datapath, .chain_split = opt->chain_split, .local = &opt->local,
				     .offload_table = opt->offload.enabled ? opt->offload.table : 0,
				     .attach_libxdp = opt->attach == XNF_ATTACH_LIBXDP,
				     .attach_clsact = opt->attach == XNF_ATTACH_CLSACT, .libxdp_priority = opt->priority,
				     .journal_dir = run_dir, .held = true, .hook = mode->hook,
				     .state_dir = opt->state_dir, .nf_name = xnf_nf_name,
				     .verifier_stats = opt->verifier_stats };
	struct xnf_port ports[XNF_MAX_PORTS];
	int sig_fd, rc = 1;

	in.plan = &plan;

	if (geteuid() != 0) {
		xnf_error("xnf run needs root (CAP_BPF and CAP_NET_ADMIN) to load XDP programs: run it with sudo");
		return 1;
	}
	if (xnf_ports_resolve(opt->ifaces, opt->nifaces, ports) || read_rules_early(&in) || xnf_size_native_maps(opt))
		goto before_start;
	sig_fd = make_signalfd();
	if (sig_fd < 0) {
		xnf_error("cannot set up signal handling: %s", strerror(errno));
		goto before_start;
	}
	signal(SIGPIPE, SIG_IGN);
	/* The name first: it checks the run directory, where the port checks write their journals. */
	if (xnf_control_claim(&in.control, run_dir, opt->name) || port_guard_start(&in.ports, opt, ports, opt->nifaces))
		goto out;
	if (mode->sockets && xnf_afxdp_check_config(&opt->afxdp, ports, opt->nifaces)) {
		rc = 2;
		goto out;
	}
	plan.peer_ports = opt->tc_send == XNF_TC_SEND_PEER ? sending_to_peers(&in) : 0;
	/* XDP takes frames of several buffers (and the sockets, descriptors) only where a port brings them: the whole
	 * length costs a helper call a frame (research/nfs-notebook.md). */
	plan.frags = mode->hook == XNF_AT_XDP && port_guard_brings_jumbo_frames(&in.ports);
	if (plan.frags && check_kernel_takes_jumbo_frames(mode))
		goto out;
	/* Set in every mode, not only hybrid's: the hybrid hand-over is a global function, which a kernel before 6.8
	 * verifies whether the program calls it or not, so the helper the kernel refuses must be out of its code. */
	plan.verdict_in_frame = !xnf_kernel_has(XNF_KF_XDP_META);
	if (plan.verdict_in_frame && mode->datapath == XNF_DATAPATH_HYBRID)
		xnf_kernel_say_fallback(XNF_KF_XDP_META);
	for (__u32 i = 0; i < opt->nifaces; i++) {
		xnf_busy_poll_recover(run_dir, ports[i].name);
		xnf_libxdp_recover(run_dir, &ports[i]);
	}
	/* Attached first, held: from here on a frame is either the NF's, in force, or dropped and counted as
	 * not_ready, never sent on by Linux while the rules are loading. */
	if (prepare_native_side(&in, ports, opt->nifaces) ||
	    xnf_xdp_load(&in.xdp, ports, opt->nifaces, mode->generic, &plan, opt->map_sizes, opt->nmap_sizes) ||
	    (opt->pin_dir && xnf_xdp_pin_maps(&in.xdp, opt->pin_dir)) || arm_checksum_finishing(&in) ||
	    (in.xdp.adopted && tables_in_workers(&in) ? start_on_kept_state(&in) : start_in_order(&in)) ||
	    start_offload(&in))
		goto out;
	watch_egress(&in);
	/* The control socket last: whoever finds it (xnf stats, rules, a script waiting for the start) finds the
	 * instance in force with its rules, options and start step. */
	if (xnf_xdp_put_in_force(&in.xdp) || xnf_control_listen(&in.control, opt->name, xnf_nf_name, mode->name))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &in.started);
	print_ready(&in);
	rc = serve_until_signal(&in, sig_fd) ? 1 : 0;
	xnf_report_summary(&in, stderr);
out:
	tear_down(&in);
	close(sig_fd);
	return rc;
before_start: /* refused before anything was set up: only the rules file was read */
	xnf_rules_free_file(in.rules);
	return rc;
}
