/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the checksum NF and its rules codec. */
#ifndef XNF_NF_CHECKSUM_H
#define XNF_NF_CHECKSUM_H

#define CK_MAX_REPEAT 4096

/* Slots of the ck_config array. */
enum ck_setting {
	CK_SETTING_REPEAT = 0, /* full L4 checksum computations per packet */
	CK_NSETTINGS,
};

enum ck_counter {
	CK_CNT_RECOMPUTED, /* packets whose checksum was computed (repeat > 0) */
	CK_CNT_NOT_L4,     /* forwarded untouched: no TCP/UDP header */
};

#endif
