/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the memload NF and its start step. */
#ifndef XNF_NF_MEMLOAD_H
#define XNF_NF_MEMLOAD_H

#include <linux/types.h>

/* One cache line: the unit of the area and of each access. */
struct ml_line {
	__u64 word[8];
};

/* 64 lines = 4 KiB unless --map-size ml_area=N says otherwise. */
#define ML_DEFAULT_LINES 64

enum ml_setting {
	ML_SETTING_LINES = 0, /* the area's size in lines, written by the start step */
	ML_NSETTINGS,
};

#endif
