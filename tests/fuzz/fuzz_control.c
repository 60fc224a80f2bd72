// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of the control protocol: any request line through the
 * dispatcher an instance serves its socket with, on the firewall's rules and
 * native maps (rules add, del and list reach the real rules engine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/control.h>
#include <xnf/runtime/map_ref.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const __u8 *data, size_t size);

static int answer(void *ctx, FILE *out)
{
	fprintf(out, "{}\n");
	return 0;
}

static const struct xnf_control_handlers handlers = {
	.info = answer,
	.stats = answer,
	.rules = { .resolve = xnf_native_resolve_map },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	xnf_cfg.nports = 1;
	if (xnf_native_maps_init(1))
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	char request[XNF_CONTROL_REQUEST_MAX + 1], err[1024];
	char *body_text = NULL;
	size_t body_len = 0;
	FILE *body;

	/* What xnf_control_serve hands on: one line, at most XNF_CONTROL_REQUEST_MAX bytes, without its newline. */
	if (size >= sizeof(request))
		return 0;
	memcpy(request, data, size);
	request[size] = '\0';
	request[strcspn(request, "\r\n")] = '\0';
	body = open_memstream(&body_text, &body_len);
	if (!body)
		return 0;
	xnf_control_dispatch(request, &handlers, body, err, sizeof(err));
	fclose(body);
	free(body_text);
	return 0;
}
