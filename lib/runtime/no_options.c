// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The options of an NF that has none of its own. Its own archive member, so
 * the linker takes it only when the NF's objects define no xnf_nf_options.
 */
#include <xnf/control.h>

const struct xnf_nf_option *const xnf_nf_options = NULL;
