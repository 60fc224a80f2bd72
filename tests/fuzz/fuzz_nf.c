// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of one NF's data path: its native build (the same source as
 * its XDP program), under AddressSanitizer and UndefinedBehaviorSanitizer, fed
 * frames as the workers feed them, with the NF's rules in its maps.
 *
 * The input's first byte picks the ingress port (two ports), the rest is the
 * frame. Rules come from $XNF_FUZZ_RULES (a rules file), loaded once. A verdict
 * the runtime could not apply (an unknown action, a redirect to a port the
 * instance has not) is a finding as much as a crash is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/map_ref.h>

#define NPORTS 2
#define MAX_FRAME 4096

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const __u8 *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct xnf_rules_target native = { .resolve = xnf_native_resolve_map, .ctx = NULL };
	const char *rules = getenv("XNF_FUZZ_RULES");
	char err[1024];

	xnf_cfg.nports = NPORTS;
	for (__u32 i = 0; i < NPORTS; i++)
		xnf_cfg.ifindex[i] = i + 1;
	if (xnf_native_maps_init(1)) {
		fprintf(stderr, "fuzz_nf: cannot create the NF's maps\n");
		exit(1);
	}
	if (rules && *rules && xnf_rules_load_file(rules, &native, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_nf: %s\n", err);
		exit(1);
	}
	return 0;
}

static int applicable(xnf_verdict v)
{
	switch (XNF_VERDICT_ACTION(v)) {
	case XNF_DROP:
	case XNF_PASS:
	case XNF_TX:
		return 1;
	case XNF_REDIRECT_ACTION:
		return XNF_VERDICT_PORT(v) < NPORTS;
	default:
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	/* A buffer of the frame's exact length after the runtime's headroom: reading past the frame, or in front of
	 * the buffer, is a heap overflow ASan reports. */
	__u8 *buffer, *frame;
	struct xnf_pkt pkt;
	xnf_verdict verdict;

	if (size < 1 || size - 1 > MAX_FRAME)
		return 0;
	buffer = malloc(XNF_PKT_HEADROOM + size - 1);
	frame = buffer + XNF_PKT_HEADROOM;
	memcpy(frame, data + 1, size - 1);
	pkt.data = frame;
	pkt.data_end = frame + size - 1;
	pkt.frame_start = buffer;
	pkt.beyond = 0;
	pkt.frags = NULL;
	pkt.ingress_port = data[0] % NPORTS;
	pkt.rx_queue = 0;
	xnf_nf_run_batch(&pkt, &verdict, 1);
	if (!applicable(verdict)) {
		fprintf(stderr, "fuzz_nf: %s gave verdict 0x%x, which the runtime cannot apply\n", xnf_nf_name, verdict);
		abort();
	}
	if ((__u8 *)pkt.data < buffer || (__u8 *)pkt.data_end > frame + size - 1 || pkt.data > pkt.data_end) {
		fprintf(stderr, "fuzz_nf: %s moved the frame's bounds outside its buffer\n", xnf_nf_name);
		abort();
	}
	free(buffer);
	return 0;
}
