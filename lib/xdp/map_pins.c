// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --pin DIR: the instance's maps pinned in bpffs while it runs (DIR/MAP_NAME), so bpftool and other tools read
 * them (bpftool map dump pinned DIR/fw_acl); removed when it stops. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/xdp_instance.h>

#define BPF_FS_MAGIC_NUMBER 0xcafe4a11

static int check_dir(const char *dir)
{
	struct statfs fs;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		xnf_error("--pin %s: cannot create it: %s", dir, strerror(errno));
		return -1;
	}
	if (statfs(dir, &fs) || (unsigned long)fs.f_type != BPF_FS_MAGIC_NUMBER) {
		xnf_error("--pin %s is not in bpffs: give a folder under a bpffs mount (/sys/fs/bpf/..., or mount one "
			  "with mount -t bpf bpf DIR: 'ip netns exec' hides /sys/fs/bpf)", dir);
		return -1;
	}
	return 0;
}

/* Only the maps this instance made (the NF's and the glue's); libbpf's internal .rodata/.bss stay out. */
static bool pinnable(const struct bpf_map *map)
{
	return !bpf_map__is_internal(map);
}

int xnf_xdp_pin_maps(struct xnf_xdp_instance *x, const char *dir)
{
	struct bpf_map *map;
	char path[512];

	if (check_dir(dir))
		return -1;
	bpf_object__for_each_map(map, x->obj) {
		if (!pinnable(map))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(map));
		if (bpf_map__pin(map, path)) {
			xnf_error("--pin: cannot pin %s at %s: %s%s", bpf_map__name(map), path, strerror(errno),
				  errno == EEXIST ? " (another instance pins there, or a killed one left it: remove the "
				  "files, or choose another folder)" : "");
			xnf_xdp_unpin_maps(x);
			return -1;
		}
	}
	x->pinned = true;
	return 0;
}

void xnf_xdp_unpin_maps(struct xnf_xdp_instance *x)
{
	struct bpf_map *map;

	if (!x->obj)
		return;
	bpf_object__for_each_map(map, x->obj) {
		if (pinnable(map) && bpf_map__is_pinned(map))
			bpf_map__unpin(map, NULL);
	}
	x->pinned = false;
}
