/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the taskemu NF and its rules codec and start step. */
#ifndef XNF_NF_TASKEMU_H
#define XNF_NF_TASKEMU_H

#include <linux/types.h>

/* One node of the list: a cache line, so M bytes of list are M/64 nodes. */
struct te_node {
	__u32 next;
	__u32 pad[15];
};

/* 64 nodes = 4 KiB unless --map-size te_list=N says otherwise. */
#define TE_DEFAULT_NODES 64
#define TE_MAX_CYCLES 10000000
#define TE_PERCENT 100

/* Slots of the te_config array. */
enum te_setting {
	TE_SETTING_CYCLES = 0, /* cycles to spend per packet (a rule) */
	TE_SETTING_NODES,      /* the list's length, written by the start step */
	TE_SETTING_TSC_KHZ,    /* the TSC's rate, written by the start step: the kernel counts time in ns */
	TE_SETTING_DROP,       /* percent of frames to drop after the work (a rule) */
	TE_NSETTINGS,
};

#endif
