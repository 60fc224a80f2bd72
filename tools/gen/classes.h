/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes (--class NAME:key=value,...): several kinds of traffic in one run, each with its own
 * headers and flows and a share of the frames, counted apart by the receiver.
 */
#ifndef XNF_GEN_CLASSES_H
#define XNF_GEN_CLASSES_H

#include <stdbool.h>
#include <linux/types.h>

#include "frame.h"
#include "probe.h"

#define XNF_GEN_CLASS_NAME 32

struct gen_class {
	char name[XNF_GEN_CLASS_NAME];
	double share;       /* as asked */
	struct frame_spec frame;
	__u32 flows;
	__u32 vary;         /* enum xnf_gen_vary bits */
	__u32 first_flow;   /* set by gen_classes_plan */
	__u32 slots;        /* of the XNF_GEN_SCHEDULE-frame schedule: the share it really gets */
	bool size_given;    /* size=N: the class's own frame size */
};

/* An address (IPv4 or IPv6, optionally ADDR/LEN) into spec's source or destination; *prefix_len is -1
 * without /LEN. 0, or -1 after saying why (what names the option). */
int gen_parse_addr(const char *what, const char *text, struct frame_spec *spec, bool source, int *prefix_len);
/* Both addresses of one family: sets spec->ipv6 and returns true, or false when they differ. */
bool gen_spec_one_family(struct frame_spec *spec);
/* "NAME:key=value,..." on top of base (the run's own headers, flows, vary). 0, or -1 after saying why. */
int gen_class_parse(const char *text, const struct gen_class *base, struct gen_class *out);
/* Numbers the classes' flows one after the other and spreads their shares over the schedule (every class
 * evenly through it). 0, or -1 after saying why (shares that do not add up to 1, too many flows). */
int gen_classes_plan(struct gen_class *classes, __u32 n, __u8 schedule[XNF_GEN_SCHEDULE]);
/* How many frames of the planned classes it takes, flows in turn, to send every flow at least once: what a
 * representative sample of the mix must hold (xnf cost times an NF on one, warm caches aside). */
unsigned long long gen_classes_frames_per_cycle(const struct gen_class *classes, __u32 n);

#endif
