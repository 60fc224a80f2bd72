// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h> /* before the linux headers rules_text.h pulls in */
#include <netinet/in.h>
#include <xnf/rules_text.h>

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

int xnf_rules_parse_mac(const char *text, __u8 *mac, char *err, size_t errlen)
{
	char tail;

	if (sscanf(text, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx%c", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4], &mac[5],
		   &tail) != 6) {
		snprintf(err, errlen, "'%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", text);
		return -1;
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

void xnf_rules_format_mac(const __u8 *m, char *out, size_t len)
{
	snprintf(out, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}
