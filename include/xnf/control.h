/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control side of the NF API: everything an NF's native-only files
 * (nfs/<name>/<name>_rules.c, <name>_control.c) may use, in one include.
 * The data path is <xnf/nf.h>; nothing else of xnf is part of the API.
 *
 * What an NF gives the control plane:
 *
 *   XNF_EXPORT_RULES(firewall, &fw_codec);   its rules codec (xnf/rules.h)
 *   XNF_EXPORT_START(taskemu, te_start);     a step run once before traffic flows
 *   XNF_EXPORT_HOUSEKEEPING(lb, lb_sweep);   a step run about once a second while it runs
 *   XNF_EXPORT_OPTIONS(router, rt_options);  options of its own (--fib kernel) that stand for rule lines
 *   XNF_EXPORT_DROP_RULES(firewall, &decl);  which of its rules are pure drops (--offload-drops)
 *
 * A standalone binary binds them to the names the runtime reads (xnf_nf_rules,
 * xnf_nf_start). In a chain (built with -DXNF_CHAIN_MEMBER) they get the
 * member's own names, and the chain's generated code dispatches to each.
 */
#ifndef XNF_CONTROL_H
#define XNF_CONTROL_H

#include <stddef.h>

#include <xnf/common.h>
#include <xnf/maps.h>
#include <xnf/rules.h>
#include <xnf/rules_text.h>
#include <xnf/settings_codec.h>

struct xnf_map;

/*
 * One of the NF's maps as the control side sees it, on whichever side runs
 * the NF: a kernel BPF map (fd) in the XDP modes, a native map (native) in
 * the user-space ones. The calls below work on both, with bpf(2)'s semantics
 * and error codes (negative errno).
 */
struct xnf_map_ref {
	const char *name;
	int fd;                 /* kernel map, or -1 */
	struct xnf_map *native; /* native map, or NULL */
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
};

int xnf_map_ref_update(const struct xnf_map_ref *ref, const void *key, const void *value, __u64 flags);
int xnf_map_ref_delete(const struct xnf_map_ref *ref, const void *key);
int xnf_map_ref_lookup(const struct xnf_map_ref *ref, const void *key, void *value);
int xnf_map_ref_next_key(const struct xnf_map_ref *ref, const void *key, void *next_key);
/* count entries at once (one syscall for a kernel map): for filling large arrays. 0 or -errno. */
int xnf_map_ref_update_batch(const struct xnf_map_ref *ref, const void *keys, const void *values, __u32 count);

/* Where a walk over a map's entries in batches goes on from (xnf_map_ref_read_batch); zeroed, it starts at the
 * beginning. `at` holds the kernel's token (a hash map's bucket) or, for a native map, the last key read. */
#define XNF_MAP_WALK_AT_MAX 256
struct xnf_map_walk {
	__u8 at[XNF_MAP_WALK_AT_MAX];
	int started;
	__u32 ends;   /* how many times a walk reached the end (-ENOENT), every entry looked at since it began */
};

/*
 * Up to *count entries (keys and values each in an array side by side) from where walk left off; *count says how
 * many came. 0: more may follow; -ENOENT: the walk reached the end (the next call starts over); another -errno:
 * nothing was read and the walk starts over. A kernel map is read in one syscall, not two per entry (a sweeper of a
 * full table would otherwise take a tenth of a core from the data path): bucket by bucket, so an entry added or
 * deleted meanwhile may be seen or not, and none twice. A native map is read key by key from the last key read,
 * in-process; should the data path delete that key in between, the walk starts over, as get_next_key does.
 */
int xnf_map_ref_read_batch(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, void *keys, void *values,
			   __u32 *count);

/* Whether an entry is over, to a sweep: live 0 judges the batch's copy, live 1 the entry as the table holds it now
 * (what it depends on read afresh too). */
typedef int (*xnf_map_entry_over)(void *ctx, const void *key, const void *value, int live);

/* One step of a sweep: the next batch of up to budget entries from walk, and each that over() finds over in the
 * batch's copy read again and deleted if it still is (the data path may have used it since). One call a batch, two
 * per entry that goes. Returns how many went. */
__u32 xnf_map_ref_sweep(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, __u32 budget,
			xnf_map_entry_over over, void *ctx);

/* Finds map `name` on the side the instance runs on. 0, or -ENOENT. */
typedef int (*xnf_map_resolver)(void *ctx, const char *name, struct xnf_map_ref *ref);

/* The maps of the running instance, as the start and housekeeping steps receive them. */
struct xnf_rules_target {
	xnf_map_resolver resolve;
	void *ctx;
};

/* The map called name in maps. 0, or -ENOENT. */
static inline int xnf_map_find(const struct xnf_rules_target *maps, const char *name, struct xnf_map_ref *ref)
{
	return maps->resolve(maps->ctx, name, ref);
}

/* The instance's ports, in command-line order (count and ifindex of each), as the data path sees them. */
const struct xnf_config *xnf_instance_ports(void);

/* The MAC address of the instance's port (command-line order): the source of what an NF sends out of it. 0, or -1
 * where the port has none to read. */
int xnf_instance_port_mac(__u32 port, __u8 mac[6]);

/*
 * Runs after the maps exist (on the side that runs the NF) and the --rules
 * file is loaded, before the program is attached: fills what the NF needs
 * that no rule line describes. 0, or -1 with a reason in err.
 */
typedef int (*xnf_nf_start_fn)(const struct xnf_rules_target *maps, char *err, size_t errlen);

/* The linked NF's start step, or NULL (weak default). */
extern const xnf_nf_start_fn xnf_nf_start;

/*
 * Runs about once a second on the control thread, beside `xnf rules` and
 * `xnf stats` (keep each call short): for state the data path cannot clean
 * up itself, such as the load balancer's idle sessions.
 */
typedef void (*xnf_nf_housekeeping_fn)(const struct xnf_rules_target *maps);

/* The linked NF's housekeeping step, or NULL (weak default). */
extern const xnf_nf_housekeeping_fn xnf_nf_housekeeping;

/*
 * An option of the NF's own, `--NAME VALUE`: it stands for the rule line
 * rule_format (printf, %s = VALUE), applied after the --rules file. So it is
 * checked with the rules, and `xnf rules` can change it while the NF runs.
 */
struct xnf_nf_option {
	const char *name;        /* "fib": the option is --fib */
	const char *value;       /* what it takes, for --help: "kernel|own" */
	const char *help;        /* what it does, for --help and describe */
	const char *rule_format; /* the rule line it stands for: "fib %s" */
};

/* The linked NF's options, ending with a NULL name; or NULL (weak default). */
extern const struct xnf_nf_option *const xnf_nf_options;

/*
 * An NF's pure-drop rules (xnf/drop_rules.h), for --offload-drops: the rules map whose keys are the rule keys
 * its data path reports hits for, and which entries of that map are pure drops (a packet that matches one is
 * dropped whatever else it carries, so dropping it earlier, in XDP, changes nothing else).
 */
struct xnf_drop_rules {
	const char *map;
	int (*drops)(const void *value);
};

/* The linked NF's pure-drop rules, or NULL (weak default). */
extern const struct xnf_drop_rules *const xnf_nf_drop_rules;

#ifdef XNF_CHAIN_MEMBER
#define XNF_EXPORT_RULES(nf, codec) const struct xnf_rules_codec *const xnf_member_rules_##nf = (codec)
#define XNF_EXPORT_START(nf, fn) const xnf_nf_start_fn xnf_member_start_##nf = (fn)
#define XNF_EXPORT_HOUSEKEEPING(nf, fn) const xnf_nf_housekeeping_fn xnf_member_housekeeping_##nf = (fn)
/* A chain takes no member options: their rule lines ("router fib kernel") do the same. */
/* A member's own options are not the chain's (its rule lines are: "router fib kernel"); the list stays unused. */
#define XNF_EXPORT_OPTIONS(nf, list)                                                      \
	static const struct xnf_nf_option *const xnf__member_options_##nf __attribute__((unused)) = (list)
/* Chains do not offload (see xnf/drop_rules.h). */
#define XNF_EXPORT_DROP_RULES(nf, decl)                                                   \
	static const struct xnf_drop_rules *const xnf__member_drop_rules_##nf __attribute__((unused)) = (decl)
#else
#define XNF_EXPORT_DROP_RULES(nf, decl) const struct xnf_drop_rules *const xnf_nf_drop_rules = (decl)
#define XNF_EXPORT_RULES(nf, codec) const struct xnf_rules_codec *const xnf_nf_rules = (codec)
#define XNF_EXPORT_START(nf, fn) const xnf_nf_start_fn xnf_nf_start = (fn)
#define XNF_EXPORT_HOUSEKEEPING(nf, fn) const xnf_nf_housekeeping_fn xnf_nf_housekeeping = (fn)
#define XNF_EXPORT_OPTIONS(nf, list) const struct xnf_nf_option *const xnf_nf_options = (list)
#endif

#endif /* XNF_CONTROL_H */
