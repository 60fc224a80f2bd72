// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The template frame xnf-gen sends: Ethernet, 802.1Q tags (a tagged class), a GTP-U tunnel (a tunnelled class),
 * IPv4 or IPv6, UDP or TCP, the probe, the payload a receiver can check (probe.h). */
#include "frame.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <xnf/runtime/log.h>

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#define FCS_LEN 4
#define VLAN_ID_MAX 4094   /* 0 marks a priority tag, 4095 is reserved (IEEE 802.1Q) */

static __u32 sum16(const void *data, __u32 len, __u32 sum)
{
	const __u8 *p = data;

	for (__u32 i = 0; i + 1 < len; i += 2)
		sum += (__u32)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((__u16)~sum);
}

static __u16 l4_checksum(const struct frame_spec *spec, const __u8 *l3, const __u8 *l4, __u32 l4_len)
{
	__u32 sum = 0;
	__u8 proto = spec->tcp ? IPPROTO_TCP : IPPROTO_UDP;

	if (spec->ipv6) {
		sum = sum16(l3 + 8, 32, sum); /* source and destination */
	} else {
		sum = sum16(l3 + 12, 8, sum);
	}
	sum += proto + l4_len;
	return fold(sum16(l4, l4_len, sum));
}

/* One id: decimal digits only, no leading zero, within 1-4094. */
static int parse_vlan_id(const char *what, const char *text, __u16 *id)
{
	unsigned long n = 0;

	for (const char *c = text; *c && n <= VLAN_ID_MAX; c++)
		n = *c >= '0' && *c <= '9' ? n * 10 + (unsigned long)(*c - '0') : VLAN_ID_MAX + 1;
	if (!*text || text[0] == '0' || n < 1 || n > VLAN_ID_MAX) {
		xnf_error("%s takes VLAN ids from 1 to %d (0 marks a priority tag, 4095 is reserved), not '%s'", what,
			  VLAN_ID_MAX, text);
		return -1;
	}
	*id = (__u16)n;
	return 0;
}

int frame_parse_vlans(const char *what, const char *text, struct frame_spec *spec)
{
	const char *dot = strchr(text, '.');
	char outer[8];

	if (!dot) {
		spec->nvlan = 1;
		return parse_vlan_id(what, text, &spec->vlan[0]);
	}
	if (strchr(dot + 1, '.') || (size_t)(dot - text) >= sizeof(outer)) {
		xnf_error("%s takes a VLAN id, or OUTER.INNER for QinQ, not '%s'", what, text);
		return -1;
	}
	snprintf(outer, sizeof(outer), "%.*s", (int)(dot - text), text);
	spec->nvlan = 2;
	return parse_vlan_id(what, outer, &spec->vlan[0]) || parse_vlan_id(what, dot + 1, &spec->vlan[1]) ? -1 : 0;
}

/* The tags after the MACs, and the type of what follows them: the frame's own Ethernet type goes last. */
static __u8 *write_tags(const struct frame_spec *spec, __u8 *buf, __u16 inner_proto)
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	__u8 *at = buf + ETH_HLEN;

	if (!spec->nvlan) {
		eth->h_proto = htons(inner_proto);
		return at;
	}
	eth->h_proto = htons(spec->nvlan == 2 ? ETH_P_8021AD : ETH_P_8021Q);
	for (__u8 i = 0; i < spec->nvlan; i++, at += FRAME_VLAN_TAG_LEN) {
		__u16 tci = htons(spec->vlan[i]);
		__u16 next = htons(i + 1 < spec->nvlan ? ETH_P_8021Q : inner_proto);

		memcpy(at, &tci, 2);
		memcpy(at + 2, &next, 2);
	}
	return at;
}

__u32 frame_header_len(const struct frame_spec *spec)
{
	return ETH_HLEN + spec->nvlan * FRAME_VLAN_TAG_LEN + (spec->gtpu ? GTPU_ENCAP_LEN : 0) +
	       (spec->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
	       (spec->tcp ? sizeof(struct tcphdr) : sizeof(struct udphdr));
}

__u32 frame_min_size(const struct frame_spec *spec)
{
	__u32 need = frame_header_len(spec) + sizeof(struct xnf_probe) + FCS_LEN;

	return need < 64 ? 64 : need;
}

static __u32 write_l3(const struct frame_spec *spec, __u8 *l3, __u32 l3_payload)
{
	if (spec->ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)l3;

		ip6->version = 6;
		ip6->payload_len = htons((__u16)l3_payload);
		ip6->nexthdr = spec->tcp ? IPPROTO_TCP : IPPROTO_UDP;
		ip6->hop_limit = 64;
		memcpy(&ip6->saddr, spec->src6, 16);
		memcpy(&ip6->daddr, spec->dst6, 16);
		return sizeof(*ip6);
	}
	struct iphdr *ip = (struct iphdr *)l3;

	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = spec->tcp ? IPPROTO_TCP : IPPROTO_UDP;
	ip->tot_len = htons((__u16)(sizeof(*ip) + l3_payload));
	ip->saddr = spec->src4;
	ip->daddr = spec->dst4;
	ip->check = fold(sum16(ip, sizeof(*ip), 0));
	return sizeof(*ip);
}

static void write_l4(const struct frame_spec *spec, __u8 *l4, __u32 l4_len)
{
	if (spec->tcp) {
		struct tcphdr *tcp = (struct tcphdr *)l4;

		tcp->source = htons(spec->sport);
		tcp->dest = htons(spec->dport);
		tcp->doff = 5;
		tcp->syn = spec->syn;
		tcp->ack = !spec->syn;
		tcp->window = htons(65535);
		return;
	}
	struct udphdr *udp = (struct udphdr *)l4;

	udp->source = htons(spec->sport);
	udp->dest = htons(spec->dport);
	udp->len = htons((__u16)l4_len);
}

static __u32 plain_frame(const struct frame_spec *spec, __u8 *buf);

/* The outer IPv4, UDP and GTP-U headers (with the optional fields and an uplink PDU Session Container) in front of
 * inner_len bytes. UDP's checksum is 0, as GTP-U peers send it over IPv4. */
static void write_tunnel(const struct frame_spec *spec, __u8 *outer, __u32 inner_len)
{
	struct iphdr *ip = (struct iphdr *)outer;
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	memset(outer, 0, GTPU_ENCAP_LEN);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((__u16)(GTPU_ENCAP_LEN + inner_len));
	ip->saddr = spec->gnb;
	ip->daddr = spec->upf;
	ip->check = fold(sum16(ip, sizeof(*ip), 0));
	udp->source = htons(GTPU_PORT);
	udp->dest = htons(GTPU_PORT);
	udp->len = htons((__u16)(GTPU_ENCAP_LEN - sizeof(*ip) + inner_len));
	gtpu_write_g_pdu(udp + 1, htonl(spec->teid), PDU_TYPE_UL, spec->qfi, inner_len);
}

__u32 frame_build(const struct frame_spec *spec, __u8 *buf)
{
	struct frame_spec inner = *spec;
	__u32 inner_len, tags;

	if (!spec->gtpu)
		return plain_frame(spec, buf);
	/* The inner frame is built GTPU_ENCAP_LEN bytes on; its Ethernet header then gives way to the tunnel. */
	inner.gtpu = false;
	inner.nvlan = 0;
	inner.size = spec->size - GTPU_ENCAP_LEN - spec->nvlan * FRAME_VLAN_TAG_LEN;
	tags = spec->nvlan * FRAME_VLAN_TAG_LEN;
	inner_len = plain_frame(&inner, buf + tags + GTPU_ENCAP_LEN) - ETH_HLEN;
	memcpy(((struct ethhdr *)buf)->h_dest, spec->dst_mac, ETH_ALEN);
	memcpy(((struct ethhdr *)buf)->h_source, spec->src_mac, ETH_ALEN);
	write_tunnel(spec, write_tags(spec, buf, ETH_P_IP), inner_len);
	return ETH_HLEN + tags + GTPU_ENCAP_LEN + inner_len;
}

/* The payload's words from the probe's end to the frame's (probe.h: xnf_gen_payload_word). */
static void write_payload(__u8 *payload, __u32 len)
{
	for (__u32 at = 0, w = 0; at < len; at += 8, w++) {
		__u64 word = xnf_gen_payload_word(w);

		memcpy(payload + at, &word, len - at < 8 ? len - at : 8);
	}
}

static __u32 plain_frame(const struct frame_spec *spec, __u8 *buf)
{
	__u32 len = spec->size - FCS_LEN;
	struct ethhdr *eth = (struct ethhdr *)buf;
	__u8 *l3, *l4;
	__u32 l3_len, l4_len = len - frame_header_len(spec) + (spec->tcp ? sizeof(struct tcphdr) : sizeof(struct udphdr));
	struct xnf_probe *probe;

	memset(buf, 0, len);
	memcpy(eth->h_dest, spec->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, spec->src_mac, ETH_ALEN);
	l3 = write_tags(spec, buf, spec->ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	l3_len = write_l3(spec, l3, l4_len);
	l4 = l3 + l3_len;
	write_l4(spec, l4, l4_len);
	probe = (struct xnf_probe *)(buf + frame_header_len(spec));
	probe->magic = htons(XNF_PROBE_MAGIC);
	write_payload((__u8 *)(probe + 1), len - frame_header_len(spec) - sizeof(*probe));
	/* UDP over IPv4 goes without checksum (0): the generator need not keep it. */
	if (spec->tcp || spec->ipv6) {
		__u16 csum = l4_checksum(spec, l3, l4, l4_len);
		__u8 *field = l4 + (spec->tcp ? 16 : 6);

		if (!spec->tcp && csum == 0)
			csum = 0xffff;
		memcpy(field, &csum, 2);
	}
	return len;
}
