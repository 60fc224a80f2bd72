// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h> /* before the linux headers rules_text.h pulls in */
#include <netinet/in.h>
#include <xnf/rules_text.h>

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xnf_rules_split(char *text, char **words, int max)
{
	char *save = NULL;
	int n = 0;

	for (char *word = strtok_r(text, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -1;
		words[n++] = word;
	}
	return n;
}

/* Six groups of one or two hex digits, separated by ':' (scanf's %hhx would take "1ff" and "-1"). */
int xnf_rules_parse_mac(const char *text, __u8 *mac, char *err, size_t errlen)
{
	const char *p = text;

	for (int i = 0; i < 6; i++) {
		int digits = 0, value = 0;

		while (isxdigit((unsigned char)*p) && digits < 3) {
			value = value * 16 + (isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10);
			p++;
			digits++;
		}
		if (digits == 0 || digits > 2 || *p != (i < 5 ? ':' : '\0')) {
			snprintf(err, errlen, "'%.40s' is not a MAC address (aa:bb:cc:dd:ee:ff)", text);
			return -1;
		}
		mac[i] = (__u8)value;
		p += i < 5;
	}
	/* Every MAC a rule names is one host's (a next hop, a backend, a container): a group address would send a
	 * unicast flow to every host of the link, and all zeros to none. */
	if (mac[0] & 1 || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5])) {
		snprintf(err, errlen, "'%.40s' is %s MAC address: give a host's own (unicast) address", text,
			 mac[0] & 1 ? "a multicast or broadcast" : "the all-zero");
		return -1;
	}
	return 0;
}

/* The len characters at text as a number: ASCII digits only (no sign, no blank, no "0x"); leading zeros are taken,
 * and a value past max is refused however many digits it has, never wrapped or cut. */
static bool take_span(const char *text, size_t len, unsigned long long max, unsigned long long *out)
{
	unsigned long long n = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		int digit = text[i] - '0';

		if (digit < 0 || digit > 9 || n > (ULLONG_MAX - (unsigned long long)digit) / 10)
			return false;
		n = n * 10 + (unsigned long long)digit;
		if (n > max)
			return false;
	}
	*out = n;
	return true;
}

static bool take_digits(const char *text, unsigned long long max, unsigned long long *out)
{
	return take_span(text, strlen(text), max, out);
}

int xnf_rules_parse_u64(const char *text, __u64 max, const char *what, __u64 *out, char *err, size_t errlen)
{
	unsigned long long n;

	if (!take_digits(text, max, &n)) {
		snprintf(err, errlen, "'%.60s' is not a %s", text, what);
		return -1;
	}
	*out = n;
	return 0;
}

int xnf_rules_parse_number(const char *text, long min, long max, const char *what, __u32 *out, char *err,
			   size_t errlen)
{
	unsigned long long n;

	if (min < 0 || !take_digits(text, (unsigned long long)max, &n) || n < (unsigned long long)min) {
		snprintf(err, errlen, "'%.60s' is not a %s", text, what);
		return -1;
	}
	*out = (__u32)n;
	return 0;
}

int xnf_rules_parse_range(const char *text, long min, long max, const char *what, __u32 *lo, __u32 *hi, char *err,
			  size_t errlen)
{
	const char *dash = strchr(text, '-');
	unsigned long long a = 0, b = 0;
	size_t low_len = dash ? (size_t)(dash - text) : strlen(text);
	bool ok = min >= 0 && take_span(text, low_len, (unsigned long long)max, &a) && a >= (unsigned long long)min;

	if (ok && dash)
		ok = take_digits(dash + 1, (unsigned long long)max, &b) && a <= b;
	else
		b = a;
	if (!ok) {
		snprintf(err, errlen, "'%.60s' is not a %s (%ld-%ld) or a range LOW-HIGH of them", text, what, min, max);
		return -1;
	}
	*lo = (__u32)a;
	*hi = (__u32)b;
	return 0;
}

int xnf_rules_parse_l4_port(const char *text, long min, __be16 *port, char *err, size_t errlen)
{
	char what[32];
	__u32 n;

	snprintf(what, sizeof(what), "port number (%ld-65535)", min);
	if (xnf_rules_parse_number(text, min, 65535, what, &n, err, errlen))
		return -1;
	*port = htons((__u16)n);
	return 0;
}

int xnf_rules_parse_prefix(const char *text, bool length_required, struct xnf_prefix *prefix, char *err,
			   size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 8], *slash;
	unsigned long long len;
	int bits;

	if (strlen(text) >= sizeof(addr)) { /* cut short, "/0001" would read as /0: everything */
		snprintf(err, errlen, "'%.60s...' is too long for an IPv4 or IPv6 prefix", text);
		return -1;
	}
	snprintf(addr, sizeof(addr), "%s", text);
	slash = strchr(addr, '/');
	if (!slash && length_required) {
		snprintf(err, errlen, "'%s' has no /length", text);
		return -1;
	}
	if (slash)
		*slash = '\0';
	memset(prefix, 0, sizeof(*prefix));
	prefix->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	bits = prefix->family == AF_INET6 ? 128 : 32;
	len = (unsigned long long)bits;
	if (inet_pton(prefix->family, addr, prefix->bytes) != 1 ||
	    (slash && !take_digits(slash + 1, (unsigned long long)bits, &len))) {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 prefix with a length of 0-%d", text, bits);
		return -1;
	}
	for (int b = (int)len; b < bits; b++) {
		if (prefix->bytes[b / 8] & (0x80 >> (b % 8))) {
			snprintf(err, errlen, "%s has host bits set beyond /%llu", text, len);
			return -1;
		}
	}
	prefix->len = (__u32)len;
	return 0;
}

int xnf_rules_parse_unicast_ipv4(const char *text, const char *what, __be32 *addr, char *err, size_t errlen)
{
	__u32 host;

	if (inet_pton(AF_INET, text, addr) != 1) {
		snprintf(err, errlen, "%s '%.60s' is not an IPv4 address", what, text);
		return -1;
	}
	host = ntohl(*addr);
	/* 0.0.0.0/8 (this host), 127.0.0.0/8 (loopback), 224.0.0.0/4 (multicast), 240.0.0.0/4 (reserved and the
	 * broadcast address): none is a host another machine can send to or answer. */
	if (host >> 24 == 0 || host >> 24 == 127 || host >> 28 >= 0xe) {
		snprintf(err, errlen, "%s %s is not a unicast address another host can reach (it is %s)", what, text,
			 host >> 24 == 0 ? "in 0.0.0.0/8" : host >> 24 == 127 ? "loopback" :
			 host >> 28 == 0xe ? "multicast" : "reserved or broadcast");
		return -1;
	}
	return 0;
}

int xnf_rules_check_unicast_ipv6_64(const __u8 prefix[8], const char *what, const char *text, char *err, size_t errlen)
{
	static const __u8 zero[8];
	/* ::/64 holds the unspecified and loopback addresses and IPv4-mapped ones; ff00::/8 is multicast; fe80::/10
	 * link-local: none is a prefix a host is given to be reached by from beyond its link. */
	const char *is = memcmp(prefix, zero, 8) == 0 ? "in ::/64 (unspecified, loopback, IPv4-mapped)" :
			 prefix[0] == 0xff ? "multicast" :
			 prefix[0] == 0xfe && (prefix[1] & 0xc0) == 0x80 ? "link-local" : NULL;

	if (!is)
		return 0;
	snprintf(err, errlen, "%s %.60s is not a unicast prefix another host can reach (it is %s)", what, text, is);
	return -1;
}

int xnf_rules_parse_tcp_udp(const char *text, __u8 *proto, char *err, size_t errlen)
{
	if (strcmp(text, "tcp") == 0)
		*proto = IPPROTO_TCP;
	else if (strcmp(text, "udp") == 0)
		*proto = IPPROTO_UDP;
	else {
		snprintf(err, errlen, "unknown protocol '%s': use tcp or udp", text);
		return -1;
	}
	return 0;
}

static const struct { const char *name; __u8 number; } ip_proto_names[] = {
	{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "icmp", IPPROTO_ICMP }, { "icmpv6", IPPROTO_ICMPV6 },
};

int xnf_rules_parse_ip_proto(const char *text, long min, __u8 *proto, char *err, size_t errlen)
{
	unsigned long long n;

	for (size_t i = 0; i < sizeof(ip_proto_names) / sizeof(ip_proto_names[0]); i++) {
		if (strcmp(text, ip_proto_names[i].name) == 0) {
			*proto = ip_proto_names[i].number;
			return 0;
		}
	}
	if (take_digits(text, 255, &n) && n >= (unsigned long long)min) {
		*proto = (__u8)n;
		return 0;
	}
	snprintf(err, errlen, "unknown protocol '%s': use tcp, udp, icmp, icmpv6 or a number %ld-255", text, min);
	return -1;
}

const char *xnf_rules_ip_proto_name(__u8 proto, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(ip_proto_names) / sizeof(ip_proto_names[0]); i++) {
		if (ip_proto_names[i].number == proto)
			return ip_proto_names[i].name;
	}
	snprintf(buf, len, "%u", proto);
	return buf;
}

void xnf_rules_format_mac(const __u8 *m, char *out, size_t len)
{
	snprintf(out, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

int xnf_rules_parse_vlan(const char *text, __u16 ids[2], char *err, size_t errlen)
{
	const char *dot = strchr(text, '.');
	size_t outer_len = dot ? (size_t)(dot - text) : strlen(text);
	unsigned long long outer = 0, inner = 0;
	bool ok = take_span(text, outer_len, 4094, &outer) && outer >= 1;

	if (ok && dot)
		ok = take_digits(dot + 1, 4094, &inner) && inner >= 1;
	if (!ok) {
		snprintf(err, errlen, "'%.60s' is not a VLAN id (1-4094) or OUTER.INNER of two", text);
		return -1;
	}
	ids[0] = (__u16)outer;
	ids[1] = (__u16)inner;
	return 0;
}

void xnf_rules_format_vlan(const __u16 ids[2], char *out, size_t len)
{
	if (ids[1])
		snprintf(out, len, "%u.%u", ids[0], ids[1]);
	else
		snprintf(out, len, "%u", ids[0]);
}
