/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A pcap file of Ethernet frames (libpcap): xnf-gen --write-pcap. */
#ifndef XNF_GEN_PCAP_OUT_H
#define XNF_GEN_PCAP_OUT_H

struct pcap_out;

/* NULL after a message. */
struct pcap_out *pcap_out_open(const char *path);
/* 0, or -1 after a message when the file could not take it (a full file system). */
int pcap_out_write(struct pcap_out *o, const unsigned char *frame, unsigned int len);
/* Writes out what is buffered and closes: 0, or -1 after a message. Frees o either way. */
int pcap_out_close(struct pcap_out *o);
/* Closes without a word (after another failure). */
void pcap_out_free(struct pcap_out *o);

#endif
