// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pure-drop rules of an NF that declares none. Its own archive member, so
 * the linker takes it only when the NF's objects define no xnf_nf_drop_rules.
 */
#include <xnf/control.h>

const struct xnf_drop_rules *const xnf_nf_drop_rules = NULL;
