/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The layouts portblock.c and portblock_rules.c share. */
#ifndef PORTBLOCK_H
#define PORTBLOCK_H

#include <linux/types.h>

#define PORTBLOCK_MAX_RULES 1024

/* A blocked destination: the protocol (IPPROTO_TCP or IPPROTO_UDP) and the port, in network order. */
struct portblock_key {
	__u8 proto;
	__u8 pad;
	__be16 port;
};

/* Its own counters, in the order of XNF_COUNTER_NAMES. */
enum portblock_counter {
	PORTBLOCK_BLOCKED,
	PORTBLOCK_PASSED,
	PORTBLOCK_NO_PORT, /* not TCP or UDP, or a later fragment: no port to judge */
};

#endif
