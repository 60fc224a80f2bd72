// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xnf-gen --write-pcap: frames written with libpcap instead of sent. Kept apart from the BPF side: libpcap's
 * headers define their own struct bpf_insn. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <xnf/runtime/log.h>

#include "pcap_out.h"

#define SNAPLEN 65535

struct pcap_out {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	const char *path;
};

struct pcap_out *pcap_out_open(const char *path)
{
	struct pcap_out *o = calloc(1, sizeof(*o));

	if (o)
		o->dead = pcap_open_dead(DLT_EN10MB, SNAPLEN);
	if (o && o->dead)
		o->dumper = pcap_dump_open(o->dead, path);
	if (!o || !o->dumper) {
		xnf_error("cannot write %s: %s", path, o && o->dead ? pcap_geterr(o->dead) : "out of memory");
		pcap_out_free(o);
		return NULL;
	}
	o->path = path;
	return o;
}

/* pcap_dump says nothing of a failed write: the stream's error flag does. */
static int failed(struct pcap_out *o)
{
	if (!ferror(pcap_dump_file(o->dumper)))
		return 0;
	xnf_error("writing %s failed (is its file system full?): the file is incomplete", o->path);
	return -1;
}

int pcap_out_write(struct pcap_out *o, const unsigned char *frame, unsigned int len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	gettimeofday(&h.ts, NULL);
	pcap_dump((u_char *)o->dumper, &h, frame);
	return failed(o);
}

int pcap_out_close(struct pcap_out *o)
{
	int rc = 0;

	if (pcap_dump_flush(o->dumper) || (fsync(fileno(pcap_dump_file(o->dumper))) && errno != EINVAL)) {
		xnf_error("writing %s failed (%s): the file is incomplete", o->path, strerror(errno));
		rc = -1;
	}
	pcap_out_free(o);
	return rc;
}

void pcap_out_free(struct pcap_out *o)
{
	if (!o)
		return;
	if (o->dumper)
		pcap_dump_close(o->dumper);
	if (o->dead)
		pcap_close(o->dead);
	free(o);
}
