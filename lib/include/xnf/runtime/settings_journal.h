/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Settings xnf changes on an interface that is not its own to keep (a veth
 * peer's offloads), written down before the change with who changed it, so
 * that a later start can put one back when its owner died without doing so
 * (SIGKILL), and never while the owner lives or on another interface:
 * process ids and namespace inodes are reused, a namespace's cookie is not.
 */
#ifndef XNF_RUNTIME_SETTINGS_JOURNAL_H
#define XNF_RUNTIME_SETTINGS_JOURNAL_H

#include <linux/types.h>
#include <net/if.h>
#include <stddef.h>
#include <xnf/runtime/process.h>

#define XNF_JOURNAL_VALUE_LEN 64

struct xnf_journaled_setting {
	__u64 netns_cookie;                    /* the interface's namespace */
	__u64 netns_inode;                     /* and its inode, to find it again (cookies cannot be looked up) */
	int ifindex;
	char ifname[IF_NAMESIZE];              /* for messages: the index is what identifies it */
	char setting[XNF_JOURNAL_VALUE_LEN];   /* e.g. "feature rx-gro" */
	char old_value[XNF_JOURNAL_VALUE_LEN];
	struct xnf_process_id owner;           /* filled by xnf_journal_write */
};

/* Writes s down in dir, owned by this process; path gets the journal's file. 0 or -errno. */
int xnf_journal_write(const char *dir, struct xnf_journaled_setting *s, char *path, size_t len);
/* The setting was put back: forget it. */
void xnf_journal_forget(const char *path);

/* Calls restore for every setting of (cookie, ifindex) in dir whose owner is dead, and forgets each one it
 * put back (restore returns 0). How many were put back. */
int xnf_journal_recover(const char *dir, __u64 cookie, int ifindex,
			int (*restore)(const struct xnf_journaled_setting *s, void *ctx), void *ctx);
/* Forgets the settings of dead owners on namespaces that are gone: nothing can put them back. How many. */
int xnf_journal_sweep(const char *dir);

#endif
