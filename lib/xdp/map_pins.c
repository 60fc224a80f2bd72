// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --pin DIR: the instance's maps pinned in bpffs while it runs (DIR/MAP_NAME), so bpftool and other tools read
 * them (bpftool map dump pinned DIR/fw_acl); removed when it stops. bpffs holds nothing but BPF objects, so whose
 * pins they are is written in the run directory (.pin-DIR.owner: the pid, its start time, the maps): an instance
 * killed with SIGKILL cannot remove its pins, and the next one pinning there removes them when that owner is dead,
 * and refuses while it lives. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <xnf/runtime/bpffs.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/process.h>
#include <xnf/runtime/xdp_instance.h>

static int check_dir(const char *dir)
{
	if (mkdir(dir, 0700) && errno != EEXIST) {
		xnf_error("--pin %s: cannot create it: %s", dir, strerror(errno));
		return -1;
	}
	if (!xnf_on_bpffs(dir)) {
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

/* The owner record of the pins in dir: RUN_DIR/.pin-DIR.owner, the folder's slashes made '_'. */
static int record_path(const struct xnf_xdp_instance *x, const char *dir, char *out, size_t len)
{
	char name[256];

	snprintf(name, sizeof(name), "%s", dir);
	for (char *c = name; *c; c++) {
		if (*c == '/')
			*c = '_';
	}
	return snprintf(out, len, "%s/.pin-%s.owner", x->journal_dir, name) < (int)len ? 0 : -1;
}

static int write_record(const struct xnf_xdp_instance *x, const char *dir)
{
	char path[768];
	struct bpf_map *map;
	struct xnf_process_id self;
	FILE *f;

	if (record_path(x, dir, path, sizeof(path)) || !(f = fopen(path, "we")))
		return -1;
	xnf_process_self(&self);
	fprintf(f, XNF_PROCESS_ID_FORMAT "\n", self.pid, self.start, self.pid_ns);
	bpf_object__for_each_map(map, x->obj) {
		if (pinnable(map))
			fprintf(f, "%s\n", bpf_map__name(map));
	}
	return fclose(f) ? -1 : 0;
}

/* What a dead owner left in dir is removed; 0, or -1 after a message when the owner lives. */
static int clear_dead_owners_pins(const struct xnf_xdp_instance *x, const char *dir)
{
	char path[768], line[256], pin[512];
	struct xnf_process_id owner;
	int removed = 0;
	FILE *f;

	if (record_path(x, dir, path, sizeof(path)) || !(f = fopen(path, "re")))
		return 0;
	if (!fgets(line, sizeof(line), f) || !xnf_process_id_parse(line, &owner)) {
		fclose(f);
		return 0;
	}
	if (xnf_process_lives(&owner)) {
		fclose(f);
		xnf_error("--pin %s: instance pid %d pins its maps there and runs: choose another folder", dir,
			  owner.pid);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(pin, sizeof(pin), "%s/%s", dir, line);
		removed += line[0] && strchr(line, '/') == NULL && unlink(pin) == 0;
	}
	fclose(f);
	unlink(path);
	if (removed)
		xnf_warn("--pin %s: removed %d maps that instance pid %d pinned there and left when it was killed", dir,
			 removed, owner.pid);
	return 0;
}

static void remove_record(const struct xnf_xdp_instance *x, const char *dir)
{
	char path[768];

	if (record_path(x, dir, path, sizeof(path)) == 0)
		unlink(path);
}

int xnf_xdp_pin_maps(struct xnf_xdp_instance *x, const char *dir)
{
	struct bpf_map *map;
	char path[512];

	if (check_dir(dir) || clear_dead_owners_pins(x, dir))
		return -1;
	if (write_record(x, dir)) {
		xnf_error("--pin %s: cannot write whose pins they are in %s: %s", dir, x->journal_dir, strerror(errno));
		return -1;
	}
	snprintf(x->pin_dir, sizeof(x->pin_dir), "%s", dir);
	bpf_object__for_each_map(map, x->obj) {
		if (!pinnable(map))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(map));
		if (bpf_map__pin(map, path)) {
			xnf_error("--pin: cannot pin %s at %s: %s%s", bpf_map__name(map), path, strerror(errno),
				  errno == EEXIST ? " (something else pinned it there: remove it, or choose another "
				  "folder)" : "");
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
	if (x->pin_dir[0])
		remove_record(x, x->pin_dir);
	x->pin_dir[0] = '\0';
	x->pinned = false;
}
