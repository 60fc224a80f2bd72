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
/* Past FIRST_BUFFER a frame comes in buffers of FRAG bytes (pkt->frags), each allocated on its own, as an AF_XDP
 * frame of several descriptors does (and the kernel's XDP test run); as many as a frame may have. How long the
 * inputs get is the fuzzer's -max_len (tests/fuzz/fuzzing.py). */
#define FIRST_BUFFER 3520
#define FRAG 4096
#define MAX_FRAME (FIRST_BUFFER + XNF_MAX_FRAGS * FRAG)

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
	/* Buffers of the frame's exact lengths, the first after the runtime's headroom: reading past a buffer, or in
	 * front of the first, is a heap overflow ASan reports. */
	size_t len = size - 1, first = len < FIRST_BUFFER ? len : FIRST_BUFFER;
	struct xnf_frags frags = { 0 };
	__u8 *buffer, *frame;
	struct xnf_pkt pkt;
	xnf_verdict verdict;

	if (size < 1 || len > MAX_FRAME)
		return 0;
	buffer = malloc(XNF_PKT_HEADROOM + first);
	frame = buffer + XNF_PKT_HEADROOM;
	memcpy(frame, data + 1, first);
	for (size_t at = first; at < len; at += FRAG) {
		__u32 piece = (__u32)(len - at < FRAG ? len - at : FRAG);

		frags.frag[frags.n].data = malloc(piece);
		memcpy(frags.frag[frags.n].data, data + 1 + at, piece);
		frags.frag[frags.n++].len = piece;
	}
	pkt.data = frame;
	pkt.data_end = frame + first;
	pkt.frame_start = buffer;
	pkt.beyond = (__u32)(len - first);
	pkt.frags = frags.n ? &frags : NULL;
	pkt.ingress_port = data[0] % NPORTS;
	pkt.rx_queue = 0;
	xnf_nf_run_batch(&pkt, &verdict, 1);
	if (!applicable(verdict)) {
		fprintf(stderr, "fuzz_nf: %s gave verdict 0x%x, which the runtime cannot apply\n", xnf_nf_name, verdict);
		abort();
	}
	if ((__u8 *)pkt.data < buffer || (__u8 *)pkt.data_end > frame + first || pkt.data > pkt.data_end) {
		fprintf(stderr, "fuzz_nf: %s moved the frame's bounds outside its buffer\n", xnf_nf_name);
		abort();
	}
	for (__u32 i = 0; i < frags.n; i++)
		free(frags.frag[i].data);
	free(buffer);
	return 0;
}
