// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h> /* before the linux headers rules_text.h pulls in */
#include <netinet/in.h>
#include <xnf/rules_text.h>

#include <ctype.h>
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
	return 0;
}

int xnf_rules_parse_number(const char *text, long min, long max, const char *what, __u32 *out, char *err,
			   size_t errlen)
{
	char *end;
	long n = strtol(text, &end, 10);

	if (!*text || *end || n < min || n > max) {
		snprintf(err, errlen, "'%s' is not a %s", text, what);
		return -1;
	}
	*out = (__u32)n;
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
	char *end;
	long n;

	for (size_t i = 0; i < sizeof(ip_proto_names) / sizeof(ip_proto_names[0]); i++) {
		if (strcmp(text, ip_proto_names[i].name) == 0) {
			*proto = ip_proto_names[i].number;
			return 0;
		}
	}
	n = strtol(text, &end, 10);
	if (*text && !*end && n >= min && n <= 255) {
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
