// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The word parsers every rules codec reads numbers, ranges and addresses with (lib/control/rules_text.c): a word
 * is taken whole and exactly, or refused; never cut short, wrapped, widened or guessed. Prints one line per group
 * and "N passed, N failed".
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <xnf/rules_text.h>

#define ZEROS60 "000000000000000000000000000000000000000000000000000000000000"

static int failures;

static void expect(const char *group, const char *word, int ok, int want_ok, unsigned long long got,
		   unsigned long long want, const char *err)
{
	if (ok == want_ok && (!ok || got == want))
		return;
	failures++;
	printf("%s: '%.40s' gave %s %llu (%s), expected %s %llu\n", group, word, ok ? "ok" : "refused", got, err,
	       want_ok ? "ok" : "refused", want);
}

static void numbers(void)
{
	static const struct { const char *word; long min, max; int ok; unsigned long long value; } cases[] = {
		{ "80", 0, 65535, 1, 80 }, { ZEROS60 "80", 0, 65535, 1, 80 }, { "65536", 0, 65535, 0, 0 },
		{ "9", 0, 7, 0, 0 }, { "7", 0, 7, 1, 7 }, { "0", 1, 7, 0, 0 }, { "+5", 0, 7, 0, 0 }, { "-0", 0, 7, 0, 0 },
		{ " 5", 0, 7, 0, 0 }, { "5 ", 0, 7, 0, 0 }, { "0x5", 0, 7, 0, 0 }, { "", 0, 7, 0, 0 },
		{ "99999999999999999999999", 0, 4294967295L, 0, 0 }, { "4294967295", 1, 4294967295L, 1, 4294967295ULL },
		{ "4294967296", 1, 4294967295L, 0, 0 }, { "\xd9\xa3", 0, 9, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		__u32 n = 0;
		int ok = !xnf_rules_parse_number(cases[i].word, cases[i].min, cases[i].max, "number", &n, err, sizeof(err));

		expect("number", cases[i].word, ok, cases[i].ok, n, cases[i].value, err);
	}
}

static void ranges(void)
{
	static const struct { const char *word; int ok; __u32 lo, hi; } cases[] = {
		{ "1-65535", 1, 1, 65535 }, { "1-" ZEROS60 "65535", 1, 1, 65535 }, { ZEROS60 "80", 1, 80, 80 },
		{ "80-22", 0, 0, 0 }, { "1-65536", 0, 0, 0 }, { "1-2-3", 0, 0, 0 }, { "-3", 0, 0, 0 }, { "3-", 0, 0, 0 },
		{ "22", 1, 22, 22 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		__u32 lo = 0, hi = 0;
		int ok = !xnf_rules_parse_range(cases[i].word, 0, 65535, "port", &lo, &hi, err, sizeof(err));

		expect("range", cases[i].word, ok, cases[i].ok, ((unsigned long long)lo << 32) | hi,
		       ((unsigned long long)cases[i].lo << 32) | cases[i].hi, err);
	}
}

static void prefixes(void)
{
	static const struct { const char *word; int ok; __u32 len; } cases[] = {
		{ "10.0.0.0/8", 1, 8 }, { "10.0.0.0/0008", 1, 8 }, { "10.0.0.0/" ZEROS60 "32", 0, 0 },
		{ "10.0.0.1/8", 0, 0 }, { "10.0.0.0/33", 0, 0 }, { "10.0.0.0/", 0, 0 }, { "10.0.0.0/+8", 0, 0 },
		{ "2001:db8::/32", 1, 32 }, { "2001:db8::/129", 0, 0 }, { "10.0.0.1", 1, 32 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xnf_prefix p = { 0 };
		char err[256] = "";
		int ok = !xnf_rules_parse_prefix(cases[i].word, false, &p, err, sizeof(err));

		expect("prefix", cases[i].word, ok, cases[i].ok, p.len, cases[i].len, err);
	}
}

static void unicast(void)
{
	static const struct { const char *word; int ok; } cases[] = {
		{ "198.18.0.1", 1 }, { "0.0.0.0", 0 }, { "127.0.0.1", 0 }, { "224.0.0.1", 0 },
		{ "255.255.255.255", 0 }, { "240.0.0.1", 0 }, { "10.0.0.256", 0 }, { "2001:db8::1", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		__be32 addr = 0;
		int ok = !xnf_rules_parse_unicast_ipv4(cases[i].word, "address", &addr, err, sizeof(err));

		expect("unicast", cases[i].word, ok, cases[i].ok, 0, 0, err);
	}
}

static void vlans(void)
{
	static const struct { const char *word; int ok; __u16 outer, inner; } cases[] = {
		{ "10", 1, 10, 0 }, { "4094", 1, 4094, 0 }, { "4095", 0, 0, 0 }, { "0", 0, 0, 0 }, { "10.20", 1, 10, 20 },
		{ "10.0", 0, 0, 0 }, { "10.", 0, 0, 0 }, { ".20", 0, 0, 0 }, { "10.20.30", 0, 0, 0 }, { "1..2", 0, 0, 0 },
		{ ZEROS60 "7", 1, 7, 0 }, { "7." ZEROS60 "8", 1, 7, 8 }, { "+7", 0, 0, 0 }, { "7 ", 0, 0, 0 },
		{ "99999999999999999999.1", 0, 0, 0 }, { "", 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		__u16 ids[2] = { 0, 0 };
		int ok = !xnf_rules_parse_vlan(cases[i].word, ids, err, sizeof(err));

		expect("vlan", cases[i].word, ok, cases[i].ok, ((unsigned long long)ids[0] << 16) | ids[1],
		       ((unsigned long long)cases[i].outer << 16) | cases[i].inner, err);
	}
}

int main(void)
{
	void (*groups[])(void) = { numbers, ranges, prefixes, unicast, vlans };
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int before = failures;

		groups[i]();
		if (failures == before)
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
