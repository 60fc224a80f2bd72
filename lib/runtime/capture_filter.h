/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xnf dump's filter expression: tcpdump's language, compiled by libpcap and run on each captured record by the
 * capture thread. Kept apart: libpcap's headers define their own struct bpf_insn. */
#ifndef XNF_LIB_RUNTIME_CAPTURE_FILTER_H
#define XNF_LIB_RUNTIME_CAPTURE_FILTER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct capture_filter;

/* The expression compiled for Ethernet frames of up to snap bytes; NULL with libpcap's reason in err. */
struct capture_filter *capture_filter_compile(const char *expr, __u32 snap, char *err, size_t errlen);
/* Whether a frame (its first cap_len bytes kept, wire_len in all) matches. */
bool capture_filter_match(const struct capture_filter *f, const void *data, __u32 cap_len, __u32 wire_len);
void capture_filter_free(struct capture_filter *f);

#endif
