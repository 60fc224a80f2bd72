/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the load balancer, its rules codec and its session sweeper. */
#ifndef XNF_NF_LB_H
#define XNF_NF_LB_H

#include <linux/types.h>

#include <xnf/parse.h> /* struct xnf_5tuple */

#define LB_MAX_SERVICES 4096
#define LB_SLOTS_PER_SERVICE 32     /* backends a service can have: slots 0..31 */
#define LB_DEFAULT_SESSIONS 262144  /* entries; a session takes two (one per direction) */
#define LB_DEFAULT_TIMEOUT_S 60

/* A virtual service: what clients address. */
struct lb_service_key {
	__u8 family; /* 4 or 6 */
	__u8 proto;  /* IPPROTO_TCP or IPPROTO_UDP */
	__be16 port;
	__be32 addr[4];
};

struct lb_service {
	__u32 present;
};

struct lb_backend_key {
	struct lb_service_key service;
	__u32 slot;
};

enum lb_backend_state {
	LB_ACTIVE = 1,   /* takes new sessions */
	LB_DRAINING = 2, /* keeps its sessions, takes no new ones */
};

struct lb_backend {
	__be32 addr[4];
	__be16 port;
	__u8 mac[6];
	__u8 egress;  /* the port (command-line order) the backend is reached by */
	__u8 state;   /* enum lb_backend_state */
	__u16 pad;
};

enum lb_rewrite {
	LB_REWRITE_DST = 1, /* client -> service: to the backend */
	LB_REWRITE_SRC = 2, /* backend -> client: from the service */
};

/* One direction of a session, keyed by the 5-tuple (struct xnf_5tuple) as it arrives. */
struct lb_session {
	__be32 addr[4]; /* the new destination (DST) or source (SRC) address */
	__be16 port;
	__u8 mac[6];    /* the next hop's MAC */
	__u8 egress;
	__u8 rewrite;   /* enum lb_rewrite */
	__u16 pad;
	__u64 last_seen_ns; /* CLOCK_MONOTONIC on both sides */
};

/*
 * The key of the other direction of the session that entry (t, s) belongs to. A session lives while either of
 * its directions is used: a flow whose backend stays silent for a while (UDP, one-way streams) must still find
 * its way back when the backend answers, so neither the packet path nor the sweeper ends one direction alone.
 */
static inline __attribute__((always_inline)) void lb_twin_key(const struct xnf_5tuple *t, const struct lb_session *s, struct xnf_5tuple *twin)
{
	__builtin_memset(twin, 0, sizeof(*twin));
	twin->family = t->family;
	twin->proto = t->proto;
	if (s->rewrite == LB_REWRITE_DST) { /* t: client -> service; the twin: backend -> client */
		__builtin_memcpy(twin->saddr, s->addr, sizeof(twin->saddr));
		twin->sport = s->port;
		__builtin_memcpy(twin->daddr, t->saddr, sizeof(twin->daddr));
		twin->dport = t->sport;
	} else {                            /* t: backend -> client; the twin: client -> service */
		__builtin_memcpy(twin->saddr, t->daddr, sizeof(twin->saddr));
		twin->sport = t->dport;
		__builtin_memcpy(twin->daddr, s->addr, sizeof(twin->daddr));
		twin->dport = s->port;
	}
}

enum lb_setting {
	LB_SETTING_TIMEOUT_S = 0, /* idle time after which a session is over; 0: the default */
	LB_NSETTINGS,
};

enum lb_counter {
	LB_CNT_NEW_SESSION,
	LB_CNT_HIT,
	LB_CNT_EXPIRED,
	LB_CNT_NO_BACKEND,
	LB_CNT_NOT_SERVICE,
	LB_CNT_TABLE_FULL,
};

#endif
