/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A frame's outermost VLAN tag put on or taken off, the same on every path. In XDP and natively the tag is four
 * bytes after the MAC addresses, moved with the frame's start (xnf/frame_start.h). At tc the kernel keeps a frame's
 * outermost tag in the skb, not in its bytes (it took it out before the hook; the parser shows it as the frame's
 * first tag): there the tag is put and taken with bpf_skb_vlan_push/pop, and the device or the stack writes it
 * where the frame goes.
 *
 * Both return 0, or -1 with the frame unchanged (no room in front, no tag to take). pkt's bounds are fresh
 * afterwards and every pointer into the frame taken before is stale: parse again from pkt->data. As with every
 * move of the frame's start, a CHECKSUM_COMPLETE skb's sum (a NIC's; veths make none) is not kept at tc: run an NF
 * that tags or untags such NICs' frames in XDP.
 */
#ifndef XNF_VLAN_H
#define XNF_VLAN_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <xnf/parse.h>
#include <xnf/frame_start.h>

#define XNF__MACS_LEN 12   /* destination and source: what stays in front of a tag */

#ifdef XNF_HOOK_TC
/* After a kernel helper changed the skb's tags: its checksum changes applied first, the frame's bounds and sum
 * read afresh after. what: the helper's result. */
static __always_inline int xnf__skb_tags_changed(struct xnf_pkt *pkt, long what)
{
	if (what)
		return -1;
	xnf_pkt_init(pkt, pkt->ctx);
	xnf__complete_sum_start(pkt);
	return 0;
}
#endif

/* The tag (tpid: ETH_P_8021Q or ETH_P_8021AD; id 1-4094) in front of the frame's own type, as its outermost. */
static __always_inline int xnf_vlan_push(struct xnf_pkt *pkt, __u16 tpid, __u16 id)
{
#ifdef XNF_HOOK_TC
	if (xnf__l4_csum_apply(pkt))
		return -1;
	return xnf__skb_tags_changed(pkt, bpf_skb_vlan_push(pkt->ctx, bpf_htons(tpid), id));
#else
	__u8 macs[XNF__MACS_LEN];
	__be16 *tag;

	if ((char *)pkt->data + ETH_HLEN > (char *)pkt->data_end)
		return -1;
	__builtin_memcpy(macs, pkt->data, XNF__MACS_LEN);
	if (xnf_frame_move_start(pkt, -(int)sizeof(struct xnf_vlanhdr)))
		return -1;
	if ((char *)pkt->data + XNF__MACS_LEN + sizeof(struct xnf_vlanhdr) > (char *)pkt->data_end)
		return -1;   /* cannot happen (the frame grew by the tag), but the verifier asks */
	__builtin_memcpy(pkt->data, macs, XNF__MACS_LEN);
	tag = (__be16 *)((char *)pkt->data + XNF__MACS_LEN);
	tag[0] = bpf_htons(tpid);
	tag[1] = bpf_htons(id & 0x0fff);
	return 0;
#endif
}

/* Takes the outermost tag off: the frame keeps its MAC addresses and the type the tag carried. */
static __always_inline int xnf_vlan_pop(struct xnf_pkt *pkt)
{
#ifdef XNF_HOOK_TC
	/* The skb's tag, or the one in its bytes (an skb nobody untagged: skb->protocol names the tag): the kernel's
	 * pop takes either, and keeps the skb's own idea of its headers right. */
	__u32 protocol = pkt->ctx->protocol;

	if ((!pkt->ctx->vlan_present && protocol != bpf_htons(ETH_P_8021Q) && protocol != bpf_htons(ETH_P_8021AD)) ||
	    xnf__l4_csum_apply(pkt))
		return -1;
	return xnf__skb_tags_changed(pkt, bpf_skb_vlan_pop(pkt->ctx));
#else
	__u8 macs[XNF__MACS_LEN];
	__u16 type;

	if ((char *)pkt->data + ETH_HLEN + sizeof(struct xnf_vlanhdr) > (char *)pkt->data_end)
		return -1;
	type = bpf_ntohs(*(__be16 *)((char *)pkt->data + XNF__MACS_LEN));
	if (type != ETH_P_8021Q && type != ETH_P_8021AD)
		return -1;
	__builtin_memcpy(macs, pkt->data, XNF__MACS_LEN);
	if (xnf_frame_move_start(pkt, (int)sizeof(struct xnf_vlanhdr)))
		return -1;
	if ((char *)pkt->data + XNF__MACS_LEN > (char *)pkt->data_end)
		return -1;
	__builtin_memcpy(pkt->data, macs, XNF__MACS_LEN);
	return 0;
#endif
}

#endif /* XNF_VLAN_H */
