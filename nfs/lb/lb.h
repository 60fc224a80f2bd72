/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the load balancer, its rules codec and its session sweeper. */
#ifndef XNF_NF_LB_H
#define XNF_NF_LB_H

#include <linux/types.h>

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
