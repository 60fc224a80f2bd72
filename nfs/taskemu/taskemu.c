/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * taskemu: the task emulator of the cost model (after the packet-IO
 * frameworks comparison). Per packet it spends a set number of CPU cycles and
 * takes one step along a random single-cycle linked list of M bytes (te_list,
 * sized with --map-size te_list=M/64), so a packet costs a known amount of
 * compute plus one dependent memory access; then it swaps the MAC addresses
 * and sends the frame on, or drops it: a set percentage of frames, spread
 * evenly, are dropped after the same work (an NF that drops what it has looked
 * at, like a firewall: the cost model's measure of a dropped frame on a path
 * whose workers are busy).
 *
 * Time: natively the TSC is read directly; BPF cannot read it, so the kernel
 * side waits the same time on its ns clock (cycles / TSC kHz, measured at start).
 */
#include <xnf/nf.h>
#include "taskemu.h"

XNF_MAP_ARRAY(te_list, struct te_node, TE_DEFAULT_NODES);
XNF_MAP_ARRAY(te_config, __u32, TE_NSETTINGS);
XNF_MAP_PERCPU_ARRAY(te_cursor, __u32, 1); /* where each CPU (or worker) is on the list */
XNF_MAP_PERCPU_ARRAY(te_drop_credit, __u32, 1); /* each CPU's percent owed towards its next drop */

static __always_inline __u32 te_setting(__u32 slot)
{
	__u32 *value = xnf_map_lookup(&te_config, &slot);

	return value ? *value : 0;
}

#ifdef XNF_TARGET_BPF
struct te_wait {
	__u64 until_ns;
};

static long te_clock_passed(__u32 index, void *ctx)
{
	return bpf_ktime_get_ns() >= ((struct te_wait *)ctx)->until_ns;
}

static __always_inline void te_spend_cycles(__u32 cycles)
{
	__u32 khz = te_setting(TE_SETTING_TSC_KHZ);
	struct te_wait wait;

	if (!cycles || !khz)
		return;
	wait.until_ns = bpf_ktime_get_ns() + (__u64)cycles * 1000000 / khz;
	bpf_loop(1 << 23, te_clock_passed, &wait, 0);
}
#elif defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

static __always_inline void te_spend_cycles(__u32 cycles)
{
	__u64 start = __rdtsc();

	while (__rdtsc() - start < cycles)
		__builtin_ia32_pause();
}
#else
/* No TSC: wait on the clock, as the kernel side does. */
static __always_inline void te_spend_cycles(__u32 cycles)
{
	__u32 khz = te_setting(TE_SETTING_TSC_KHZ);
	__u64 until;

	if (!cycles || !khz)
		return;
	until = xnf_now_ns() + (__u64)cycles * 1000000 / khz;
	while (xnf_now_ns() < until)
		;
}
#endif

static __always_inline void te_step_list(void)
{
	__u32 zero = 0, nodes = te_setting(TE_SETTING_NODES), *cursor = xnf_map_lookup(&te_cursor, &zero);
	struct te_node *node;

	if (!cursor || !nodes)
		return;
	node = xnf_map_lookup(&te_list, cursor);
	if (node)
		*cursor = node->next < nodes ? node->next : 0;
}

/* Every frame adds the drop percentage to a credit; a frame that takes it to
 * 100 is dropped. Drops are spread evenly (50: every other frame), with no
 * random draw to cost anything or to vary between runs. */
static __always_inline int te_due_for_drop(void)
{
	__u32 zero = 0, percent = te_setting(TE_SETTING_DROP), *credit = xnf_map_lookup(&te_drop_credit, &zero);

	if (!credit || !percent)
		return 0;
	*credit += percent;
	if (*credit < TE_PERCENT)
		return 0;
	*credit -= TE_PERCENT;
	return 1;
}

static __always_inline xnf_verdict taskemu(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;

	if ((void *)(eth + 1) > pkt->data_end)
		return XNF_DROP_MALFORMED;
	te_spend_cycles(te_setting(TE_SETTING_CYCLES));
	te_step_list();
	if (te_due_for_drop())
		return XNF_DROP;
	xnf_swap_macs(eth);
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(taskemu);
