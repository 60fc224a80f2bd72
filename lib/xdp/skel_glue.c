// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compiled once per NF with -DXNF_SKEL=<nf>_bpf, -DXNF_TC_SKEL=<nf>_tc_bpf and their headers, so the generic
 * loader can reach either of an NF's skeletons (its XDP build and its tc build) through one small interface.
 */
#include <xnf/runtime/embedded.h>

#include <errno.h>
#include <stdlib.h>

#include XNF_SKEL_HEADER
#include XNF_TC_SKEL_HEADER

#define XNF_CAT2(a, b) a##b
#define XNF_CAT(a, b) XNF_CAT2(a, b)
#define SKEL_FN(suffix) XNF_CAT(XNF_SKEL, suffix)
#define TC_SKEL_FN(suffix) XNF_CAT(XNF_TC_SKEL, suffix)

struct xnf_embedded {
	struct XNF_SKEL *xdp;    /* one of the two is open */
	struct XNF_TC_SKEL *tc;
};

struct xnf_embedded *xnf_embedded_open(enum xnf_kernel_hook hook)
{
	struct xnf_embedded *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (hook == XNF_AT_TC)
		e->tc = TC_SKEL_FN(__open)();
	else
		e->xdp = SKEL_FN(__open)();
	if (!e->xdp && !e->tc) {
		int err = errno;

		free(e);
		errno = err;
		return NULL;
	}
	return e;
}

struct bpf_object *xnf_embedded_object(struct xnf_embedded *e)
{
	return e->tc ? e->tc->obj : e->xdp->obj;
}

void xnf_embedded_set_config(struct xnf_embedded *e, const struct xnf_config *cfg)
{
	if (e->tc)
		e->tc->rodata->xnf_cfg = *cfg;
	else
		e->xdp->rodata->xnf_cfg = *cfg;
}

void xnf_embedded_destroy(struct xnf_embedded *e)
{
	if (!e)
		return;
	if (e->tc)
		TC_SKEL_FN(__destroy)(e->tc);
	else
		SKEL_FN(__destroy)(e->xdp);
	free(e);
}
