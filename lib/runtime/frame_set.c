// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kept apart from anything that includes linux/bpf.h: libpcap's headers define their own struct bpf_insn. */
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/runtime/log.h>

#include "frame_set.h"

static int add(struct frame_set *s, const u_char *bytes, __u32 len)
{
	__u8 **data = realloc(s->data, (s->n + 1) * sizeof(*data));
	__u32 *lens = data ? realloc(s->len, (s->n + 1) * sizeof(*lens)) : NULL;

	if (data)
		s->data = data;
	if (lens)
		s->len = lens;
	if (!data || !lens || !(s->data[s->n] = malloc(len)))
		return -1;
	memcpy(s->data[s->n], bytes, len);
	s->len[s->n++] = len;
	return 0;
}

int frame_set_read(const char *path, struct frame_set *out)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *bytes;
	int got;

	memset(out, 0, sizeof(*out));
	if (!p) {
		xnf_error("cannot read frames from %s: %s", path, err);
		return -1;
	}
	while ((got = pcap_next_ex(p, &h, &bytes)) == 1) {
		if (h->caplen != h->len) {
			xnf_error("%s: frame %u is cut short (%u of its %u bytes were captured): give whole frames",
				  path, out->n + 1, h->caplen, h->len);
			got = -3;
			break;
		}
		if (h->caplen > FRAME_SET_MAX) {
			xnf_error("%s: frame %u has %u bytes: frames are timed in one buffer, up to %d bytes (a mix of "
				  "jumbo frames cannot be timed yet: give sizes up to that)", path, out->n + 1, h->caplen,
				  FRAME_SET_MAX);
			got = -3;
			break;
		}
		if (add(out, bytes, h->caplen)) {
			xnf_error("out of memory reading %s", path);
			got = -3;
			break;
		}
	}
	if (got == -1)
		xnf_error("%s: %s", path, pcap_geterr(p));
	pcap_close(p);
	if (got == -2 && out->n == 0)
		xnf_error("%s holds no frame", path);
	if (got != -2 || out->n == 0) {
		frame_set_free(out);
		return -1;
	}
	return 0;
}

void frame_set_free(struct frame_set *s)
{
	for (__u32 i = 0; i < s->n; i++)
		free(s->data[i]);
	free(s->data);
	free(s->len);
	memset(s, 0, sizeof(*s));
}
