// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compiled once per NF with -DXNF_SKEL=<nf>_bpf and -DXNF_SKEL_HEADER, so the
 * generic loader can reach any NF's skeleton through one small interface.
 */
#include <xnf/runtime/embedded.h>

#include <errno.h>
#include <stdlib.h>

#include XNF_SKEL_HEADER

#define XNF_CAT2(a, b) a##b
#define XNF_CAT(a, b) XNF_CAT2(a, b)
#define SKEL_FN(suffix) XNF_CAT(XNF_SKEL, suffix)

struct xnf_embedded {
	struct XNF_SKEL *skel;
};

struct xnf_embedded *xnf_embedded_open(void)
{
	struct xnf_embedded *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->skel = SKEL_FN(__open)();
	if (!e->skel) {
		int err = errno;

		free(e);
		errno = err;
		return NULL;
	}
	return e;
}

struct bpf_object *xnf_embedded_object(struct xnf_embedded *e)
{
	return e->skel->obj;
}

void xnf_embedded_set_config(struct xnf_embedded *e, const struct xnf_config *cfg)
{
	e->skel->rodata->xnf_cfg = *cfg;
}

void xnf_embedded_destroy(struct xnf_embedded *e)
{
	if (!e)
		return;
	SKEL_FN(__destroy)(e->skel);
	free(e);
}
