/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GTP-U on the wire (3GPP TS 29.281, the PDU Session Container of TS 38.415): what the upf NF reads and writes and
 * what xnf-gen sends and finds its probes behind.
 */
#ifndef XNF_GTPU_H
#define XNF_GTPU_H

#include <xnf/common.h>

#define GTPU_PORT 2152

/* GTP-U (TS 29.281): version 1, protocol type GTP, and the flags of the optional fields. */
#define GTPU_FLAGS_V1 0x30
#define GTPU_FLAG_E 0x04           /* an extension header follows */
#define GTPU_FLAG_S 0x02           /* the sequence number is meaningful */
#define GTPU_FLAG_PN 0x01
#define GTPU_ECHO_REQUEST 1
#define GTPU_ECHO_RESPONSE 2
#define GTPU_ERROR_INDICATION 26
#define GTPU_END_MARKER 254
#define GTPU_G_PDU 255
#define GTPU_EXT_PDU_SESSION 0x85  /* PDU Session Container (TS 38.415) */
#define GTPU_EXT_MUST_KNOW 0x80    /* type's top bit: the receiving endpoint must understand it (TS 29.281 5.2.1) */
#define GTPU_IE_RECOVERY 14
#define PDU_TYPE_DL 0
#define PDU_TYPE_UL 1

struct gtpu_hdr {
	__u8 flags;
	__u8 type;
	__be16 length;  /* bytes after these 8 */
	__be32 teid;
};

/* Present when any of E, S, PN is set. */
struct gtpu_opt {
	__be16 seq;
	__u8 npdu;
	__u8 next_ext;
};

/* A PDU Session Container of length 1 (4 bytes): PDU type, QFI, the next extension header's type. */
struct gtpu_pdu_session {
	__u8 length;
	__u8 pdu_type;  /* high nibble */
	__u8 qfi;       /* low 6 bits */
	__u8 next_ext;
};

/* The headers of a G-PDU between Ethernet and the packet it carries, as the UPF and xnf-gen write them: IPv4, UDP,
 * GTP-U with its optional fields and a PDU Session Container. */
#define GTPU_ENCAP_LEN \
	((int)(20 + 8 + sizeof(struct gtpu_hdr) + sizeof(struct gtpu_opt) + sizeof(struct gtpu_pdu_session)))

/* At gtp: a G-PDU's GTP-U header for teid, its optional fields (sequence 0) and a PDU Session Container of pdu_type
 * (PDU_TYPE_UL or _DL) and qfi, in front of inner_len bytes. */
static __always_inline void gtpu_write_g_pdu(void *gtp, __be32 teid, __u8 pdu_type, __u8 qfi, __u32 inner_len)
{
	struct gtpu_hdr *hdr = gtp;
	struct gtpu_opt *opt = (struct gtpu_opt *)(hdr + 1);
	struct gtpu_pdu_session *psc = (struct gtpu_pdu_session *)(opt + 1);

	hdr->flags = GTPU_FLAGS_V1 | GTPU_FLAG_E;
	hdr->type = GTPU_G_PDU;
	hdr->length = bpf_htons((__u16)(sizeof(*opt) + sizeof(*psc) + inner_len));
	hdr->teid = teid;
	opt->seq = 0;
	opt->npdu = 0;
	opt->next_ext = GTPU_EXT_PDU_SESSION;
	psc->length = 1;   /* in 4-byte words */
	psc->pdu_type = (__u8)(pdu_type << 4);
	psc->qfi = qfi & 0x3f;
	psc->next_ext = 0;
}

#endif /* XNF_GTPU_H */
