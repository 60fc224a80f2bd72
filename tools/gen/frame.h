/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_GEN_FRAME_H
#define XNF_GEN_FRAME_H

#include <stdbool.h>
#include <linux/types.h>

#include "probe.h"

struct frame_spec {
	__u8 src_mac[6], dst_mac[6];
	bool ipv6;
	bool tcp;
	__be32 src4, dst4;
	__u8 src6[16], dst6[16];
	__u16 sport, dport; /* host order */
	__u32 size;         /* on the wire, FCS included */
	/* A G-PDU: the frame above tunnelled in GTP-U from gnb to upf (both IPv4) with teid, a PDU Session Container
	 * of qfi, uplink. */
	bool gtpu;
	__be32 gnb, upf;
	__u32 teid;         /* host order */
	__u8 qfi;
};

/* Ethernet + tunnel + IP + L4 header bytes: where the probe starts. */
__u32 frame_header_len(const struct frame_spec *spec);
/* The smallest frame (FCS included) that carries the probe, and never less than 64. */
__u32 frame_min_size(const struct frame_spec *spec);
/* Writes the template (checksums right for flow 0) and returns its length without FCS. */
__u32 frame_build(const struct frame_spec *spec, __u8 *buf);

#endif
