// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Settings changed on interfaces, written down with their owner (settings_journal.h). One file each:
 * DIR/.setting-COOKIE-IFINDEX-SETTING.journal, lines of key=value. */
#include <xnf/runtime/settings_journal.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/process.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX ".setting-"
#define SUFFIX ".journal"

static int path_of(const char *dir, const struct xnf_journaled_setting *s, char *path, size_t len)
{
	char setting[XNF_JOURNAL_VALUE_LEN];

	for (size_t i = 0; i < sizeof(setting); i++) {
		char c = s->setting[i];

		setting[i] = c && !isalnum((unsigned char)c) && c != '-' ? '_' : c;
		if (!c)
			break;
	}
	setting[sizeof(setting) - 1] = '\0';
	return snprintf(path, len, "%s/" PREFIX "%llu-%d-%s" SUFFIX, dir, (unsigned long long)s->netns_cookie,
			s->ifindex, setting) < (int)len ? 0 : -ENAMETOOLONG;
}

int xnf_journal_write(const char *dir, struct xnf_journaled_setting *s, char *path, size_t len)
{
	char tmp[4096 + 8];
	FILE *f;
	int err;

	xnf_process_self(&s->owner);
	err = path_of(dir, s, path, len);
	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wxe");
	if (!f && errno == EEXIST) {
		unlink(tmp);
		f = fopen(tmp, "wxe");
	}
	if (!f)
		return -errno;
	fprintf(f, "cookie=%llu\ninode=%llu\nifindex=%d\nifname=%s\nsetting=%s\nold=%s\nowner=" XNF_PROCESS_ID_FORMAT "\n",
		(unsigned long long)s->netns_cookie, (unsigned long long)s->netns_inode, s->ifindex, s->ifname,
		s->setting, s->old_value, s->owner.pid, s->owner.start, s->owner.pid_ns);
	/* Whole or not at all: a journal half written could not be trusted to put anything back. */
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err ? err : -EIO;
	}
	return 0;
}

void xnf_journal_forget(const char *path)
{
	if (path && path[0])
		unlink(path);
}

static void take(struct xnf_journaled_setting *s, const char *key, const char *value)
{
	if (!strcmp(key, "cookie"))
		s->netns_cookie = strtoull(value, NULL, 10);
	else if (!strcmp(key, "inode"))
		s->netns_inode = strtoull(value, NULL, 10);
	else if (!strcmp(key, "ifindex"))
		s->ifindex = atoi(value);
	else if (!strcmp(key, "ifname"))
		snprintf(s->ifname, sizeof(s->ifname), "%s", value);
	else if (!strcmp(key, "setting"))
		snprintf(s->setting, sizeof(s->setting), "%s", value);
	else if (!strcmp(key, "old"))
		snprintf(s->old_value, sizeof(s->old_value), "%s", value);
	else if (!strcmp(key, "owner"))
		xnf_process_id_parse(value, &s->owner);
}

static int read_journal(const char *path, struct xnf_journaled_setting *s)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = '\0';
		if (eq) {
			*eq = '\0';
			take(s, line, eq + 1);
		}
	}
	fclose(f);
	return s->owner.pid > 0 && s->setting[0] ? 0 : -EINVAL;
}

static int owner_lives(const struct xnf_journaled_setting *s)
{
	return xnf_process_lives(&s->owner);
}

/* Calls fn on every journal in dir whose name starts with prefix and that reads whole; stops when fn returns < 0. */
static int each_journal(const char *dir, const char *prefix,
			int (*fn)(const char *path, const struct xnf_journaled_setting *s, void *ctx), void *ctx)
{
	char path[4096];
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct xnf_journaled_setting s;
		size_t len = strlen(e->d_name);
		int rc;

		if (strncmp(e->d_name, prefix, strlen(prefix)) || len < strlen(SUFFIX) ||
		    strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_journal(path, &s))
			continue;
		rc = fn(path, &s, ctx);
		if (rc < 0)
			break;
		n += rc;
	}
	closedir(d);
	return n;
}

static int forget_if_gone(const char *path, const struct xnf_journaled_setting *s, void *ctx)
{
	if (owner_lives(s) || xnf_netns_exists(s->netns_cookie, s->netns_inode))
		return 0;
	unlink(path);
	return 1;
}

int xnf_journal_sweep(const char *dir)
{
	return each_journal(dir, PREFIX, forget_if_gone, NULL);
}

struct recovery {
	__u64 cookie;
	int ifindex;
	int (*restore)(const struct xnf_journaled_setting *s, void *ctx);
	void *ctx;
};

static int recover_one(const char *path, const struct xnf_journaled_setting *s, void *ctx)
{
	struct recovery *r = ctx;

	if (s->netns_cookie != r->cookie || s->ifindex != r->ifindex || owner_lives(s) || r->restore(s, r->ctx))
		return 0;
	unlink(path);
	return 1;
}

int xnf_journal_recover(const char *dir, __u64 cookie, int ifindex,
			int (*restore)(const struct xnf_journaled_setting *s, void *ctx), void *ctx)
{
	struct recovery r = { .cookie = cookie, .ifindex = ifindex, .restore = restore, .ctx = ctx };
	char prefix[64];

	snprintf(prefix, sizeof(prefix), PREFIX "%llu-%d-", (unsigned long long)cookie, ifindex);
	return each_journal(dir, prefix, recover_one, &r);
}
