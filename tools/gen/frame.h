/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_GEN_FRAME_H
#define XNF_GEN_FRAME_H

#include <stdbool.h>
#include <linux/types.h>

#include "probe.h"

#define FRAME_MAX_VLANS 2
#define FRAME_VLAN_TAG_LEN 4

struct frame_spec {
	__u8 src_mac[6], dst_mac[6];
	bool ipv6;
	bool tcp;
	bool syn;           /* TCP: a connection's first segment (SYN), else a segment of one under way (ACK) */
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
	/* 802.1Q tags after the MACs: one (a C-tag), or two (an 802.1ad S-tag, then the C-tag); ids host order. */
	__u8 nvlan;
	__u16 vlan[FRAME_MAX_VLANS];
};

/* "ID" or "OUTER.INNER" (802.1Q ids 1-4094) into spec's tags. 0, or -1 after saying why (what names the option). */
int frame_parse_vlans(const char *what, const char *text, struct frame_spec *spec);
/* Ethernet + tags + tunnel + IP + L4 header bytes: where the probe starts. */
__u32 frame_header_len(const struct frame_spec *spec);
/* The smallest frame (FCS included) that carries the probe, and never less than 64. */
__u32 frame_min_size(const struct frame_spec *spec);
/* Writes the template (checksums right for flow 0) and returns its length without FCS. */
__u32 frame_build(const struct frame_spec *spec, __u8 *buf);

#endif
