/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The pieces every rules codec parses and prints: words, MAC addresses, numbers, ports, protocols. */
#ifndef XNF_RULES_TEXT_H
#define XNF_RULES_TEXT_H

#include <stddef.h>
#include <linux/types.h>

/* Splits text in place at blanks. Returns the number of words, or -1 if there are more than max. */
int xnf_rules_split(char *text, char **words, int max);
/* aa:bb:cc:dd:ee:ff. 0, or -1 with the reason in err. */
int xnf_rules_parse_mac(const char *text, __u8 *mac, char *err, size_t errlen);
/* A whole number in [min, max]; what names it in the error ("port number (0-7)"). */
int xnf_rules_parse_number(const char *text, long min, long max, const char *what, __u32 *out, char *err,
			   size_t errlen);
/* A TCP or UDP port number in [min, 65535], into network order. */
int xnf_rules_parse_l4_port(const char *text, long min, __be16 *port, char *err, size_t errlen);
/* "tcp" or "udp", into IPPROTO_TCP or IPPROTO_UDP. */
int xnf_rules_parse_tcp_udp(const char *text, __u8 *proto, char *err, size_t errlen);
/* tcp, udp, icmp, icmpv6 or a protocol number in [min, 255]. 0, or -1 with the reason in err. */
int xnf_rules_parse_ip_proto(const char *text, long min, __u8 *proto, char *err, size_t errlen);
/* The name xnf_rules_parse_ip_proto takes for proto (a number when it has none); buf holds the number. */
const char *xnf_rules_ip_proto_name(__u8 proto, char *buf, size_t len);
void xnf_rules_format_mac(const __u8 *mac, char *out, size_t len);

#endif
