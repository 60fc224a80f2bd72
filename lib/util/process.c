// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/process.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long long xnf_process_start_time(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* The command name may hold spaces and parentheses: fields are counted from its last ')'. Each step lands p
	 * on the space before the next field: state (3) first, start time (22) last. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		for (int field = 3; p && field <= 22; field++)
			p = strchr(p + 1, ' ');
		if (p)
			start = strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return start;
}
