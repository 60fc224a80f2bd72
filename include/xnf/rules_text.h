/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The pieces every rules codec parses and prints: words, MAC addresses, numbers, ports, protocols,
 * prefixes. */
#ifndef XNF_RULES_TEXT_H
#define XNF_RULES_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* An IPv4 or IPv6 prefix as a rule gives it. */
struct xnf_prefix {
	int family;       /* AF_INET or AF_INET6 */
	__u8 bytes[16];   /* the address, network order: 4 or 16 of them */
	__u32 len;        /* its length in bits */
};

/* Splits text in place at blanks. Returns the number of words, or -1 if there are more than max. */
int xnf_rules_split(char *text, char **words, int max);
/* aa:bb:cc:dd:ee:ff. 0, or -1 with the reason in err. */
int xnf_rules_parse_mac(const char *text, __u8 *mac, char *err, size_t errlen);
/*
 * Every number a rule holds is read by these: ASCII digits only (no sign, no blank, no hex), the whole word or
 * nothing; leading zeros are taken, a value out of range is refused however many digits it has.
 */
/* A whole number in [min, max] (min >= 0); what names it in the error ("port number (0-7)"). */
int xnf_rules_parse_number(const char *text, long min, long max, const char *what, __u32 *out, char *err,
			   size_t errlen);
/* A whole number in [0, max], 64 bits wide (a SEID). */
int xnf_rules_parse_u64(const char *text, __u64 max, const char *what, __u64 *out, char *err, size_t errlen);
/* "N" (lo = hi = N) or "LOW-HIGH" with LOW <= HIGH, each in [min, max]. */
int xnf_rules_parse_range(const char *text, long min, long max, const char *what, __u32 *lo, __u32 *hi, char *err,
			  size_t errlen);
/* A TCP or UDP port number in [min, 65535], into network order. */
int xnf_rules_parse_l4_port(const char *text, long min, __be16 *port, char *err, size_t errlen);
/* A unicast IPv4 address of a host (not in 0/8, 127/8, 224/4 or 240/4), network order; what names it in the
 * error ("public address"). */
int xnf_rules_parse_unicast_ipv4(const char *text, const char *what, __be32 *addr, char *err, size_t errlen);
/* Whether an IPv6 /64 prefix (its first 8 bytes) can be a host's: 0, or -1 with the reason (text, as given, in it). */
int xnf_rules_check_unicast_ipv6_64(const __u8 prefix[8], const char *what, const char *text, char *err, size_t errlen);
/* "tcp" or "udp", into IPPROTO_TCP or IPPROTO_UDP. */
int xnf_rules_parse_tcp_udp(const char *text, __u8 *proto, char *err, size_t errlen);
/* tcp, udp, icmp, icmpv6 or a protocol number in [min, 255]. 0, or -1 with the reason in err. */
int xnf_rules_parse_ip_proto(const char *text, long min, __u8 *proto, char *err, size_t errlen);
/* The name xnf_rules_parse_ip_proto takes for proto (a number when it has none); buf holds the number. */
/* ADDR/LEN, IPv4 or IPv6, its host bits zero; ADDR alone (a host) unless length_required. 0, or -1 with the reason. */
int xnf_rules_parse_prefix(const char *text, bool length_required, struct xnf_prefix *prefix, char *err,
			   size_t errlen);
const char *xnf_rules_ip_proto_name(__u8 proto, char *buf, size_t len);
/* A VLAN match: ID (the outermost tag's, 1-4094; ids[1] = 0) or OUTER.INNER (both tags, as QinQ stacks them). */
int xnf_rules_parse_vlan(const char *text, __u16 ids[2], char *err, size_t errlen);
/* The text xnf_rules_parse_vlan takes for ids. */
void xnf_rules_format_vlan(const __u16 ids[2], char *out, size_t len);
void xnf_rules_format_mac(const __u8 *mac, char *out, size_t len);

#endif
