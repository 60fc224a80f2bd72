/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rules tables: maps the data path reads and only rules write (a firewall's rules, a UPF's PDRs and FARs, an lb's
 * services and backends), kept in two generations so that a rules file is put in force whole, at once.
 *
 *   XNF_RULES_HASH(name, key_type, value_type, max_entries)          memory allocated up front
 *   XNF_RULES_HASH_GROWING(name, key_type, value_type, max_entries)  memory allocated per entry
 *   XNF_RULES_LPM(name, key_type, value_type, max_entries)     key starts with __u32 prefixlen
 *   XNF_RULES_ARRAY(name, value_type, max_entries)             settings: key __u32 index
 *   xnf_rules_lookup(name, &key)    -> value pointer or NULL, from the generation in force for this frame
 *   xnf_rules_table(name)           -> the table of that generation (xnf_rules_table_t), NULL if none, for many
 *                                      lookups (a loop's: the kernel's verifier then follows one lookup a round)
 *   xnf_rules_table_lookup(table, &key)
 *
 * A reload (`xnf reload`, SIGHUP, `xnf apply`) copies the tables in force into the other generation, makes its
 * changes there, then switches every table of the NF with one write; a frame reads the generation once, as it
 * starts, so it meets the old rules or the new ones in every table it looks at, never a mix (a UPF's new PDR with
 * its old FAR). Before the old generation is emptied the rules engine waits until no frame can still be reading
 * it (a kernel RCU grace period; the workers' quiescent states). Single rule changes (`xnf rules add|del`, PFCP)
 * go straight to the generation in force: one entry changes at once anyway.
 *
 * The data path may write into a value it looked up (a rule's counters): what it writes into the generation in
 * force between a reload's copy and its switch is left behind with that generation.
 *
 * The control side names a table by its first name; the engine finds the generation in force itself.
 */
#ifndef XNF_RULES_TABLES_H
#define XNF_RULES_TABLES_H

#include <xnf/maps.h>

/* The generation in force (0 or 1), written by the rules engine alone. */
#define XNF_RULES_GENERATION_MAP xnf_rules_gen
/* A table's second generation is the map called its name and this; in the kernel, the array of both its
 * generations is called its name and XNF_RULES_BOTH_GENERATIONS. */
#define XNF_RULES_SECOND_GENERATION _gen1
#define XNF_RULES_BOTH_GENERATIONS _generations

#define XNF__RULES_STR2(x) #x
#define XNF__RULES_STR(x) XNF__RULES_STR2(x)
#define XNF__RULES_CAT2(a, b) a##b
#define XNF__RULES_CAT(a, b) XNF__RULES_CAT2(a, b)
#define XNF_RULES_GENERATION_MAP_NAME XNF__RULES_STR(XNF_RULES_GENERATION_MAP)
#define XNF_RULES_SECOND_GENERATION_SUFFIX XNF__RULES_STR(XNF_RULES_SECOND_GENERATION)

/* The NF's source (not its control side, which includes this only for the names above). */
#if defined(XNF_TARGET_BPF) || defined(XNF_NF_H)

#ifdef XNF_TARGET_BPF
/*
 * In the kernel a table's two generations are reached through an array of both (map-in-map): a lookup picks the
 * generation's map by index, so the verifier follows one path whichever it is (a branch between two maps would
 * double the paths it explores at every lookup).
 */
#define XNF__RULES_TABLE(name, map_type, K, V, N, flags)                       \
	struct XNF__RULES_CAT(name, _table) {                                  \
		__uint(type, map_type);                                        \
		__type(key, K);                                                \
		__type(value, V);                                              \
		__uint(max_entries, N);                                        \
		__uint(map_flags, flags);                                      \
	};                                                                     \
	struct XNF__RULES_CAT(name, _table) name SEC(".maps");                 \
	struct XNF__RULES_CAT(name, _table)                                    \
		XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION) SEC(".maps"); \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                      \
		__type(key, __u32);                                            \
		__uint(max_entries, 2);                                        \
		__array(values, struct XNF__RULES_CAT(name, _table));          \
	} XNF__RULES_CAT(name, XNF_RULES_BOTH_GENERATIONS) SEC(".maps") = {     \
		.values = { &name, &XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION) } \
	}
/* As XNF_MAP_HASH and XNF_MAP_HASH_GROWING: allocated up front, a table's two generations take twice the memory;
 * allocated per entry, the generation not in force holds entries only while a reload builds it. */
#define XNF_RULES_HASH(name, K, V, N) XNF__RULES_TABLE(name, BPF_MAP_TYPE_HASH, K, V, N, 0)
#define XNF_RULES_HASH_GROWING(name, K, V, N) XNF__RULES_TABLE(name, BPF_MAP_TYPE_HASH, K, V, N, BPF_F_NO_PREALLOC)
#define XNF_RULES_LPM(name, K, V, N) XNF__RULES_TABLE(name, BPF_MAP_TYPE_LPM_TRIE, K, V, N, BPF_F_NO_PREALLOC)
/* BPF_F_INNER_MAP: the kernel checks an array in a slot against the declared size, which --map-size or a mode whose
 * kernel maps hold nothing (sized 1) may have changed. */
#define XNF_RULES_ARRAY(name, V, N) XNF__RULES_TABLE(name, BPF_MAP_TYPE_ARRAY, __u32, V, N, BPF_F_INNER_MAP)
#else
#define XNF_RULES_HASH(name, K, V, N)                                          \
	XNF_MAP_HASH(name, K, V, N);                                           \
	XNF_MAP_HASH(XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION), K, V, N)
#define XNF_RULES_HASH_GROWING(name, K, V, N) XNF_RULES_HASH(name, K, V, N)
#define XNF_RULES_LPM(name, K, V, N)                                           \
	XNF_MAP_LPM(name, K, V, N);                                            \
	XNF_MAP_LPM(XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION), K, V, N)
#define XNF_RULES_ARRAY(name, V, N)                                            \
	XNF_MAP_ARRAY(name, V, N);                                             \
	XNF_MAP_ARRAY(XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION), V, N)
#endif

XNF_MAP_ARRAY(xnf_rules_gen, __u32, 1);

#ifdef XNF_TARGET_BPF
/* The generation the frame on this CPU started with: a program runs a frame to its end on one CPU. */
XNF_MAP_PERCPU_ARRAY(xnf_rules_frame_gen, __u32, 1);

static __always_inline void xnf__rules_frame_begin(void)
{
	__u32 zero = 0, *in_force = bpf_map_lookup_elem(&xnf_rules_gen, &zero);
	__u32 *frame = bpf_map_lookup_elem(&xnf_rules_frame_gen, &zero);

	if (frame)
		*frame = in_force ? *in_force & 1 : 0;
}

static __always_inline __u32 xnf__rules_frame_generation(void)
{
	__u32 zero = 0, *frame = bpf_map_lookup_elem(&xnf_rules_frame_gen, &zero);

	return frame ? *frame : 0;
}
#else
/* Natively the generation is read once per batch: a worker's batch ends before its next quiescent state. */
extern __thread __u32 xnf_rules_batch_generation;

static inline void xnf__rules_frame_begin(void)
{
	__u32 zero = 0, *in_force = xnf_map_lookup(&xnf_rules_gen, &zero);

	xnf_rules_batch_generation = in_force ? *in_force & 1 : 0;
}

static inline __u32 xnf__rules_frame_generation(void)
{
	return xnf_rules_batch_generation;
}
#endif

/* The glue's entry points call this as a frame (natively: a batch) starts (xnf/nf.h has it do nothing). */
#undef XNF__RULES_FRAME_BEGIN
#define XNF__RULES_FRAME_BEGIN() xnf__rules_frame_begin()

#ifdef XNF_TARGET_BPF
typedef void *xnf_rules_table_t;

static __always_inline void *xnf__rules_table(void *generations)
{
	__u32 generation = xnf__rules_frame_generation();

	return bpf_map_lookup_elem(generations, &generation);
}

static __always_inline void *xnf__rules_lookup(void *generations, const void *key)
{
	void *table = xnf__rules_table(generations);

	return table ? bpf_map_lookup_elem(table, key) : NULL;
}

#define xnf_rules_table(name) xnf__rules_table(&XNF__RULES_CAT(name, XNF_RULES_BOTH_GENERATIONS))
#define xnf_rules_table_lookup(table, key) bpf_map_lookup_elem(table, key)
#define xnf_rules_lookup(name, key) xnf__rules_lookup(&XNF__RULES_CAT(name, XNF_RULES_BOTH_GENERATIONS), key)
#else
typedef struct xnf_map *xnf_rules_table_t;

#define xnf_rules_table(name)                                                  \
	(xnf__rules_frame_generation() ? &XNF__RULES_CAT(name, XNF_RULES_SECOND_GENERATION) : &name)
#define xnf_rules_table_lookup(table, key) xnf_map_lookup(table, key)
#define xnf_rules_lookup(name, key) xnf_map_lookup(xnf_rules_table(name), key)
#endif

#endif /* the NF's source */

#endif /* XNF_RULES_TABLES_H */
