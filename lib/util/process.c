// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/process.h>

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A process's state letter (field 3) and start time (field 22) from /proc/PID/stat; false where it has none. */
static bool read_stat(int pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* The command name may hold spaces and parentheses: fields are counted from its last ')'. Each step lands p
	 * on the space before the next field: state (3) first, start time (22) last. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		*state = p[1] == ' ' ? p[2] : '?';
		for (int field = 3; p && field <= 22; field++)
			p = strchr(p + 1, ' ');
		if (p) {
			*start = strtoull(p + 1, NULL, 10);
			found = true;
		}
	}
	fclose(f);
	return found;
}

unsigned long long xnf_process_start_time(int pid)
{
	unsigned long long start;
	char state;

	return read_stat(pid, &state, &start) ? start : 0;
}

/* The process that started at start is still there and has not exited: a zombie (its parent gone or not yet
 * reaping it) holds its pid but nothing else, and has run its last line. */
static bool running(int pid, unsigned long long start)
{
	unsigned long long now;
	char state;

	return read_stat(pid, &state, &now) && now == start && state != 'Z' && state != 'X' && state != 'x';
}

static unsigned long long pid_namespace_of(const char *proc_entry)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", proc_entry);
	return stat(path, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

void xnf_process_self(struct xnf_process_id *id)
{
	id->pid = (int)getpid();
	id->start = xnf_process_start_time(id->pid);
	id->pid_ns = pid_namespace_of("self");
}

/* The pid a process of this namespace has in its own, innermost one (the last of its status's NSpid); 0: none. */
static int innermost_pid(const char *proc_entry)
{
	char path[64], line[256];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", proc_entry);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');

			pid = last ? atoi(last + 1) : 0;
			break;
		}
	}
	fclose(f);
	return pid;
}

static bool lives_in_other_namespace(const struct xnf_process_id *id)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || pid_namespace_of(e->d_name) != id->pid_ns ||
		    innermost_pid(e->d_name) != id->pid)
			continue;
		found = running(atoi(e->d_name), id->start);
	}
	closedir(d);
	return found;
}

bool xnf_process_lives(const struct xnf_process_id *id)
{
	if (id->pid <= 0)
		return false;
	if (id->pid_ns && id->pid_ns != pid_namespace_of("self"))
		return lives_in_other_namespace(id);
	return running(id->pid, id->start);
}

bool xnf_process_id_parse(const char *text, struct xnf_process_id *id)
{
	int fields = sscanf(text, "%d %llu %llu", &id->pid, &id->start, &id->pid_ns);

	if (fields == 2)
		id->pid_ns = 0;
	return fields >= 2 && id->pid > 0;
}
