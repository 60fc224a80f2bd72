// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctfw's housekeeping: the SDK's sweeper frees connections that are over. */
#include <xnf/control.h>
#include <xnf/conntrack_control.h>

static struct xnf_ct_sweeper sweeper;

static void ctfw_sweep(const struct xnf_rules_target *maps)
{
	xnf_ct_sweep(maps, "ctfw_ct", "ctfw_ct_timeouts", &sweeper);
}

XNF_EXPORT_HOUSEKEEPING(ctfw, ctfw_sweep);
