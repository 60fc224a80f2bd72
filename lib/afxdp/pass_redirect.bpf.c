/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XNF_PASS from the AF_XDP workers without live frames (pass_tap.c): a worker writes the frame into its port's TAP
 * device, and this program, at the TAP's tc ingress, hands it on into the port's own receive (bpf_redirect with
 * BPF_F_INGRESS). The stack then takes it as received on the port, as XDP_PASS would have handed it over: ARP and
 * neighbour discovery learn the port's neighbours, and replies leave through the port.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

/* A TAP's ifindex -> the ifindex of the port whose passed frames it carries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 32);
} xnf_pass_ports SEC(".maps");

SEC("tc")
int xnf_pass_redirect(struct __sk_buff *skb)
{
	__u32 tap = skb->ifindex, *port = bpf_map_lookup_elem(&xnf_pass_ports, &tap);

	if (!port)
		return TC_ACT_SHOT;
	return (int)bpf_redirect(*port, BPF_F_INGRESS);
}

char _license[] SEC("license") = "GPL";
