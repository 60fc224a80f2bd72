/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An instance's ports as the port checks see them (port_checks.h): judged
 * before anything is set up, refusing what would lose frames; their veth
 * peers fixed where --peers fix says so, and put back at the end; and every
 * second, whether unfinished checksums can arrive, which the XDP program then
 * finishes (include/xnf/internal/csum_finish.h).
 */
#ifndef XNF_LIB_RUNTIME_PORT_GUARD_H
#define XNF_LIB_RUNTIME_PORT_GUARD_H

#include <xnf/runtime/port_checks.h>

struct run_options;

/* --peers: what xnf may do to the other end of a veth port. */
enum xnf_peers_policy { XNF_PEERS_FIX, XNF_PEERS_CHECK };
extern const char *const xnf_peers_names[];

struct port_guard {
	__u32 nports;
	struct xnf_port_facts facts[XNF_MAX_PORTS];
	struct xnf_peer_changes changes[XNF_MAX_PORTS];
	__u64 peer_dropped_at_start[XNF_MAX_PORTS]; /* the veth peers' tx_dropped when the instance started */
	struct xnf_port_use use;
	int finish_fd;   /* the program's xnf_finish_csum map, once loaded; -1 before */
	bool finishing;  /* what it says */
};

/* How the options use the ports (what the checks judge against). */
struct xnf_port_use port_use_of(const struct run_options *opt);

/* Inspects, fixes (--peers fix) and judges every port; prints the problems. 0, or -1 when a port would lose
 * frames (everything it changed is put back then). */
int port_guard_start(struct port_guard *g, const struct run_options *opt, const struct xnf_port *ports,
		     __u32 nports);
/* Once the program is loaded: tells it whether to finish checksums, and on which ports to send its TX as a
 * redirect: a bit per port whose peer's GRO the fix turned on (tx_fd: the program's xnf_tx_by_redirect map). */
void port_guard_arm(struct port_guard *g, int finish_fd, int tx_fd);
/* Once a second: the peers' offloads again; the program told when finishing becomes needed or not. */
void port_guard_follow(struct port_guard *g);
/* The ports' veth peers' drops since the start, as a JSON member: , "ports": [{"iface": ..., "peer": ...,
 * "dropped_before_xdp": N}]: frames the peer could not hand to the port (its receive ring full), which no
 * program of the port saw. Nothing when no port has a veth peer. */
void port_guard_json(const struct port_guard *g, FILE *out);
/* Whether any port may bring frames longer than one buffer (xnf_port_brings_jumbo_frames). */
bool port_guard_brings_jumbo_frames(const struct port_guard *g);
/* A bit per port that is a veth whose peer is in another namespace (where tc sends with bpf_redirect_peer). */
__u32 port_guard_peer_ports(const struct port_guard *g);
/* Puts the peers' settings back. Safe to call more than once, and after a failed start. */
/* The ports let go with the peers left as they are: the program stays attached (--state) and needs them so. */
void port_guard_leave(struct port_guard *g);
void port_guard_stop(struct port_guard *g);

#endif
