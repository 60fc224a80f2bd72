// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The housekeeping step of an NF that needs none. Its own archive member, so
 * the linker takes it only when the NF's objects define no xnf_nf_housekeeping.
 */
#include <xnf/control.h>

const xnf_nf_housekeeping_fn xnf_nf_housekeeping = NULL;
