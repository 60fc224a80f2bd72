// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The codec of an NF without rules. Its own archive member, so the linker
 * takes it only when the NF's object defines no xnf_nf_rules, and no compiler
 * sees this NULL next to code that tests the pointer (it would fold the test).
 */
#include <xnf/rules.h>

const struct xnf_rules_codec *const xnf_nf_rules = NULL;
