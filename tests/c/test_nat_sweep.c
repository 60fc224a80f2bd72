// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The NAT's sweeper (nfs/nat/nat_control.c) on kernel tables and on native ones: after a whole pass over a table it
 * rests until the soonest of its entries can be over (a stale session added meanwhile stays: it does not look); a
 * binding that goes ends the mappings' rest, so that its mapping goes with it; a change of the idle times ends every
 * rest. Prints one line per side and exits non-zero on a failure.
 */
#define SIDE_MAPS 4
#include "two_sides.h"
#include "../../nfs/nat/nat_control.c"

#define TABLE_SIZE 1024
#define FRESH 100
#define SECOND 1000000000ull
#define INSIDE 0x0a000001
#define REMOTE 0xc6120001

static struct nat_endpoint inside(__u32 n)
{
	return (struct nat_endpoint){ .addr = INSIDE, .port = (__be16)(1024 + n), .proto = 17 };
}

static struct nat_public_key public_port(__u32 n)
{
	return (struct nat_public_key){ .port = (__be16)(20000 + n), .proto = 17 };
}

static struct nat_session_key session_key(__u32 n)
{
	return (struct nat_session_key){ .inside = inside(n), .remote_addr = REMOTE, .remote_port = 53 };
}

/* Inside endpoint n's session, binding and mapping, each last seen at the time given (0: not made). */
static int put(const struct xnf_map_ref *m, __u32 n, __u64 session_seen, __u64 binding_seen, __u64 mapping_seen)
{
	struct nat_session_key sk = session_key(n);
	struct nat_session session = { .last_seen_ns = session_seen };
	struct nat_public_key pk = public_port(n);
	struct nat_binding binding = { .inside = inside(n), .last_seen_ns = binding_seen };
	struct nat_endpoint in = inside(n);
	struct nat_mapping mapping = { .public_port = pk.port, .last_seen_ns = mapping_seen };

	return (session_seen && xnf_map_ref_update(&m[0], &sk, &session, BPF_ANY)) ||
	       (binding_seen && xnf_map_ref_update(&m[1], &pk, &binding, BPF_ANY)) ||
	       (mapping_seen && xnf_map_ref_update(&m[2], &in, &mapping, BPF_ANY));
}

/* Whether map holds key (values up to 64 bytes: the NAT's are). */
static bool there(const struct xnf_map_ref *map, const void *key)
{
	__u8 value[64];

	return map->value_size <= sizeof(value) && xnf_map_ref_lookup(map, key, value) == 0;
}

static bool has_session(const struct xnf_map_ref *m, __u32 n)
{
	struct nat_session_key k = session_key(n);

	return there(&m[0], &k);
}

static bool has_binding(const struct xnf_map_ref *m, __u32 n)
{
	struct nat_public_key k = public_port(n);

	return there(&m[1], &k);
}

static bool has_mapping(const struct xnf_map_ref *m, __u32 n)
{
	struct nat_endpoint k = inside(n);

	return there(&m[2], &k);
}

static void set_udp_timeout(const struct xnf_map_ref *config, __u32 seconds)
{
	__u32 slot = NAT_SETTING_TIMEOUT_UDP_S;

	xnf_map_ref_update(config, &slot, &seconds, BPF_ANY);
}

static int check(struct side *s, const char *label)
{
	const struct xnf_map_ref *m = s->maps, *config = &s->maps[3];
	struct xnf_rules_target maps = side_target(s);
	__u64 now = xnf_now_ns();

	for (int i = 0; i < NSWEEPS; i++) {
		memset(&sweeps[i].walk, 0, sizeof(sweeps[i].walk));
		memset(&sweeps[i].rest, 0, sizeof(sweeps[i].rest));
	}
	memset(rested_on, 0, sizeof(rested_on));
	set_udp_timeout(config, 30);
	for (__u32 n = 0; n < FRESH; n++)
		EXPECT(put(m, n, now, now, now) == 0, "cannot fill the tables");
	/* Its binding idle 20 s of 30: it stays, and can be over in 10 s. */
	EXPECT(put(m, FRESH, now, now - 20 * SECOND, now) == 0, "cannot add the half-idle binding");
	nat_sweep(&maps);
	EXPECT(sweeps[SWEEP_BINDINGS].walk.ends == 1 && has_binding(m, FRESH),
	       "the bindings' first pass ended %u times, the half-idle binding %s", sweeps[SWEEP_BINDINGS].walk.ends,
	       has_binding(m, FRESH) ? "stayed" : "went");
	EXPECT(sweeps[SWEEP_BINDINGS].rest.until_ns == now + 10 * SECOND, "the bindings rest until %llu, not %llu",
	       (unsigned long long)sweeps[SWEEP_BINDINGS].rest.until_ns, (unsigned long long)(now + 10 * SECOND));
	EXPECT(sweeps[SWEEP_SESSIONS].rest.until_ns >= now + 30 * SECOND, "the sessions rest only until %llu",
	       (unsigned long long)sweeps[SWEEP_SESSIONS].rest.until_ns);

	EXPECT(put(m, FRESH + 1, now - 60 * SECOND, 0, 0) == 0, "cannot add a stale session");
	nat_sweep(&maps);
	EXPECT(has_session(m, FRESH + 1) && sweeps[SWEEP_SESSIONS].walk.ends == 1, "resting, it read the sessions");

	/* A binding over (its rest ended: its time came) goes, and its mapping, resting, with it. */
	EXPECT(put(m, FRESH + 2, 0, now - 60 * SECOND, now) == 0, "cannot add a stale binding's mapping");
	sweeps[SWEEP_BINDINGS].rest.until_ns = 0;
	nat_sweep(&maps);
	EXPECT(!has_binding(m, FRESH + 2) && !has_mapping(m, FRESH + 2),
	       "after its binding went (%s), the mapping %s", has_binding(m, FRESH + 2) ? "no: it stayed" : "yes",
	       has_mapping(m, FRESH + 2) ? "stayed" : "went");
	EXPECT(has_mapping(m, 0) && has_binding(m, 0), "a fresh mapping or binding went");

	set_udp_timeout(config, 50);
	nat_sweep(&maps);
	EXPECT(!has_session(m, FRESH + 1) && has_session(m, 0),
	       "after the idle time changed the stale session %s, a fresh one %s",
	       has_session(m, FRESH + 1) ? "stayed" : "went", has_session(m, 0) ? "stayed" : "went");
	return 0;
}

int main(void)
{
	static const struct side_map maps[SIDE_MAPS] = {
		{ "nat_sessions", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, sizeof(struct nat_session_key),
		  sizeof(struct nat_session), TABLE_SIZE },
		{ "nat_bindings", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, sizeof(struct nat_public_key),
		  sizeof(struct nat_binding), TABLE_SIZE },
		{ "nat_mappings", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, sizeof(struct nat_endpoint),
		  sizeof(struct nat_mapping), TABLE_SIZE },
		{ "nat_config", BPF_MAP_TYPE_ARRAY, XNF_MAP_TYPE_ARRAY, 4, 4, NAT_NSETTINGS },
	};

	return run_on_both_sides(maps, check);
}
