// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Preferred busy polling (afxdp-sysc, xdp-sk-sysc): the socket options that
 * let recvfrom/sendto run the driver, and the interface settings that keep
 * interrupts off meanwhile. The settings are system-wide per interface, so
 * their old values are restored on exit, and written to a journal in the run
 * directory before they change: an instance killed with SIGKILL cannot restore
 * them, so the next start on the interface does (xnf_busy_poll_recover).
 */
#include "afxdp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xnf/runtime/log.h>

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

/* Interrupts stay deferred this many times, with this timeout, while user space polls. */
#define DEFER_HARD_IRQS "2"
#define GRO_FLUSH_TIMEOUT_NS "200000"
static const char *const changed_settings[] = { "napi_defer_hard_irqs", "gro_flush_timeout" };

int xnf_busy_poll_apply_socket(int fd, const struct xnf_afxdp_config *cfg)
{
	int one = 1, usec = (int)cfg->busy_poll_usec, budget = (int)cfg->busy_poll_budget;

	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof(usec)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget))) {
		xnf_error("this kernel refuses preferred busy polling on AF_XDP sockets (%s): it needs Linux "
			  "5.11 or newer; use --mode afxdp or afxdp-poll", strerror(errno));
		return -1;
	}
	return 0;
}

static int read_setting(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Writes value to path, whole or not at all: open_flags O_CREAT | O_TRUNC make a journal file, none a sysfs
 * setting (which exists already). */
static int write_value(const char *path, const char *value, int open_flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | open_flags, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

static int write_setting(const char *path, const char *value)
{
	return write_value(path, value, 0);
}

/* The journal of one setting: named by the network namespace (interface names are per namespace), the
 * interface and the setting. */
static int journal_path(char *out, size_t len, const char *dir, const char *ifname, const char *name)
{
	struct stat ns;

	if (!dir || stat("/proc/self/ns/net", &ns))
		return -1;
	return snprintf(out, len, "%s/.%lu-%s-%s.old", dir, (unsigned long)ns.st_ino, ifname, name) < (int)len ? 0 : -1;
}

static void recover_one(const char *dir, const char *ifname, const char *name)
{
	char journal[256], path[128], old[32];

	if (journal_path(journal, sizeof(journal), dir, ifname, name) || read_setting(journal, old, sizeof(old)))
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, name);
	if (write_setting(path, old) == 0) {
		xnf_warn("%s: put %s back to %s, as it was before an instance that did not stop changed it", ifname,
			 name, old);
		unlink(journal);
	}
}

void xnf_busy_poll_recover(const char *dir, const char *ifname)
{
	for (size_t i = 0; i < sizeof(changed_settings) / sizeof(changed_settings[0]); i++)
		recover_one(dir, ifname, changed_settings[i]);
}

static int change(struct xnf_afxdp *a, const char *ifname, const char *name, const char *value)
{
	struct saved_setting *s = &a->settings[a->nsettings];

	snprintf(s->path, sizeof(s->path), "/sys/class/net/%s/%s", ifname, name);
	if (read_setting(s->path, s->old_value, sizeof(s->old_value))) {
		xnf_error("cannot read %s (%s): is /sys this network namespace's? run xnf with 'ip netns exec', which "
			  "mounts it", s->path, strerror(errno));
		return -1;
	}
	if (journal_path(s->journal, sizeof(s->journal), a->cfg.journal_dir, ifname, name) == 0 &&
	    write_value(s->journal, s->old_value, O_CREAT | O_TRUNC)) {
		xnf_error("cannot keep %s's old value in %s (%s): without it a killed instance could not have it put "
			  "back", s->path, s->journal, strerror(errno));
		return -1;
	}
	if (write_setting(s->path, value)) {
		xnf_error("cannot set %s to %s (%s): is /sys this network namespace's? run xnf with 'ip netns exec', "
			  "which mounts it", s->path, value, strerror(errno));
		unlink(s->journal);
		return -1;
	}
	s->changed = true;
	a->nsettings++;
	return 0;
}

int xnf_busy_poll_apply_iface(struct xnf_afxdp *a, const char *ifname)
{
	if (change(a, ifname, changed_settings[0], DEFER_HARD_IRQS) ||
	    change(a, ifname, changed_settings[1], GRO_FLUSH_TIMEOUT_NS))
		return -1;
	return 0;
}

void xnf_busy_poll_restore(struct xnf_afxdp *a)
{
	for (__u32 i = 0; i < a->nsettings; i++) {
		struct saved_setting *s = &a->settings[i];

		if (s->changed && write_setting(s->path, s->old_value))
			xnf_warn("could not restore %s to %s: %s", s->path, s->old_value, strerror(errno));
		else if (s->changed && s->journal[0])
			unlink(s->journal);
		s->changed = false;
	}
	a->nsettings = 0;
}
