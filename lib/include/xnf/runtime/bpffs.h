/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bpffs, where pinned programs and maps live: whether a path is in one. */
#ifndef XNF_RUNTIME_BPFFS_H
#define XNF_RUNTIME_BPFFS_H

#include <stdbool.h>
#include <sys/vfs.h>

#define XNF_BPF_FS_MAGIC 0xcafe4a11UL

static inline bool xnf_on_bpffs(const char *path)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 && (unsigned long)fs.f_type == XNF_BPF_FS_MAGIC;
}

#endif
