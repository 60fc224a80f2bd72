// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xnf dump's filter expression (capture_filter.h). */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture_filter.h"

struct capture_filter {
	struct bpf_program program;
};

struct capture_filter *capture_filter_compile(const char *expr, __u32 snap, char *err, size_t errlen)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, (int)snap);
	struct capture_filter *f = calloc(1, sizeof(*f));

	if (!dead || !f) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (pcap_compile(dead, &f->program, expr, 1, PCAP_NETMASK_UNKNOWN)) {
		snprintf(err, errlen, "the filter '%s' does not compile: %s", expr, pcap_geterr(dead));
		goto fail;
	}
	pcap_close(dead);
	return f;
fail:
	if (dead)
		pcap_close(dead);
	free(f);
	return NULL;
}

bool capture_filter_match(const struct capture_filter *f, const void *data, __u32 cap_len, __u32 wire_len)
{
	struct pcap_pkthdr h = { .caplen = cap_len, .len = wire_len };

	return pcap_offline_filter(&f->program, &h, data) != 0;
}

void capture_filter_free(struct capture_filter *f)
{
	if (!f)
		return;
	pcap_freecode(&f->program);
	free(f);
}
