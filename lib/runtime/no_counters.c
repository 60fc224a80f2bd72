// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counter names of an NF that declares none. Its own archive member, so the
 * linker takes it only when the NF's object has no XNF_COUNTER_NAMES.
 */
#include <stddef.h>

const char *xnf_nf_counter_names[] = { NULL };
