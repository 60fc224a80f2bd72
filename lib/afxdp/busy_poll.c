// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Preferred busy polling (afxdp-sysc, xdp-sk-sysc): the socket options that
 * let recvfrom/sendto run the driver, and the interface settings that keep
 * interrupts off meanwhile. The settings are system-wide per interface, so
 * their old values are restored on exit, and written to the settings journal
 * (settings_journal.h: the owner, the namespace's cookie, the interface's
 * index) before they change: an instance killed with SIGKILL cannot restore
 * them, so the next start on the interface does (xnf_busy_poll_recover), and
 * never while their owner lives or on another namespace's interface.
 */
#include "afxdp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <net/if.h>

#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/settings_journal.h>

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
		xnf_error("cannot set preferred busy polling on an AF_XDP socket: %s (use --mode afxdp or afxdp-poll)",
			  strerror(errno));
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

static int write_setting(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

#define SETTING_PREFIX "sysfs "

/* The journal's key of an interface of this namespace: its cookie and inode, and the interface's index. */
static int journal_key(const char *ifname, struct xnf_journaled_setting *s)
{
	struct stat ns;

	memset(s, 0, sizeof(*s));
	s->ifindex = (int)if_nametoindex(ifname);
	if (!s->ifindex || xnf_netns_cookie_here(&s->netns_cookie) || stat("/proc/thread-self/ns/net", &ns))
		return -1;
	s->netns_inode = ns.st_ino;
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	return 0;
}

static int restore_journaled(const struct xnf_journaled_setting *s, void *ctx)
{
	char name[IF_NAMESIZE], path[128];

	(void)ctx;
	if (strncmp(s->setting, SETTING_PREFIX, strlen(SETTING_PREFIX)) || !if_indextoname((unsigned)s->ifindex, name))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, s->setting + strlen(SETTING_PREFIX));
	if (write_setting(path, s->old_value))
		return -1;
	xnf_warn("%s: put %s back to %s, as it was before an instance that did not stop changed it", name,
		 s->setting + strlen(SETTING_PREFIX), s->old_value);
	return 0;
}

void xnf_busy_poll_recover(const char *dir, const char *ifname)
{
	struct xnf_journaled_setting key;

	if (dir && journal_key(ifname, &key) == 0)
		xnf_journal_recover(dir, key.netns_cookie, key.ifindex, restore_journaled, NULL);
}

static int change(struct xnf_afxdp *a, const char *ifname, const char *name, const char *value)
{
	struct saved_setting *s = &a->settings[a->nsettings];
	struct xnf_journaled_setting entry;

	snprintf(s->path, sizeof(s->path), "/sys/class/net/%s/%s", ifname, name);
	if (read_setting(s->path, s->old_value, sizeof(s->old_value))) {
		xnf_error("cannot read %s (%s): is /sys this network namespace's? run xnf with 'ip netns exec', which "
			  "mounts it", s->path, strerror(errno));
		return -1;
	}
	if (a->cfg.journal_dir && journal_key(ifname, &entry) == 0) {
		int err;

		snprintf(entry.setting, sizeof(entry.setting), SETTING_PREFIX "%s", name);
		snprintf(entry.old_value, sizeof(entry.old_value), "%s", s->old_value);
		err = xnf_journal_write(a->cfg.journal_dir, &entry, s->journal, sizeof(s->journal));
		if (err) {
			xnf_error("cannot keep %s's old value in %s (%s): without it a killed instance could not have it "
				  "put back", s->path, a->cfg.journal_dir, strerror(-err));
			return -1;
		}
	}
	if (write_setting(s->path, value)) {
		xnf_error("cannot set %s to %s (%s): is /sys this network namespace's? run xnf with 'ip netns exec', "
			  "which mounts it", s->path, value, strerror(errno));
		xnf_journal_forget(s->journal);
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
		else if (s->changed)
			xnf_journal_forget(s->journal);
		s->changed = false;
	}
	a->nsettings = 0;
}
