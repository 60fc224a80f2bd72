/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the firewall NF and its rules codec. */
#ifndef XNF_NF_FIREWALL_H
#define XNF_NF_FIREWALL_H

#include <linux/types.h>

#define FW_MAX_RULES (1u << 20)

enum fw_action {
	FW_ALLOW = 0, /* forward: out of the next port, or back out of the only one */
	FW_DROP = 1,
};

/* The firewall's own counters (xnf stats shows them by name). */
enum fw_counter {
	FW_CNT_RULE_DROP,
	FW_CNT_RULE_ALLOW,
	FW_CNT_DEFAULT_DROP,
	FW_CNT_DEFAULT_ALLOW,
	FW_CNT_NON_IP,
};

/* Slots of the fw_config array. */
enum fw_setting {
	FW_SETTING_DEFAULT_ACTION = 0, /* action for packets no rule matches */
	FW_NSETTINGS,
};

#endif
