// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a start needs from the machine, checked before anything is attached: the ports, the rules file as the NF's
 * codec reads it, and the --state and --pin folders in bpffs (a state folder holding only what xnf keeps there).
 * `run` makes the folders' checks first; `check-run` makes them all alone, changing nothing, so that the service
 * (xnf apply, the daemon's reload, xnf move) can check a restart before it stops what runs
 * (python/xnf/service/start_check.py), and prints the options it read as JSON for the caller to compare with what
 * it meant to give.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <xnf/runtime/bpffs.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/xdp_instance.h>

#include "start_check.h"

#define NETNS_HINT "('ip netns exec' hides /sys/fs/bpf: mount -t bpf bpf /sys/fs/bpf inside it)"

/*
 * A folder of the instance's own in bpffs: there, or its parent there. Never a bpffs mount itself: other tools keep
 * theirs in it (iproute2's tc/, libxdp's dispatchers, other programs' pins), and a folder xnf is given it may
 * remove (`xnf stop --drop-state`, an instance leaving the service's file).
 */
static int check_bpffs_folder(const char *option, const char *dir)
{
	char path[PATH_MAX], parent[PATH_MAX];
	struct stat here, up;

	if (!*dir || snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		xnf_error("--%s '%s' is not a folder's path", option, dir);
		return -1;
	}
	snprintf(parent, sizeof(parent), "%s", dirname(path));   /* the folder it is made in (one level: state_keep.c) */
	if (stat(dir, &here) == 0) {
		if (!S_ISDIR(here.st_mode) || !xnf_on_bpffs(dir)) {
			xnf_error("--%s %s is not in bpffs, or not a folder: give one under a bpffs mount, such as "
				  "/sys/fs/bpf/xnf-NAME %s", option, dir, NETNS_HINT);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/..", dir);
		if (stat(path, &up) == 0 && up.st_dev != here.st_dev) {
			xnf_error("--%s %s is a bpffs mount, which other tools share: give a folder of the instance's own in "
				  "it, such as %s/xnf-NAME", option, dir, dir);
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT) {
		xnf_error("--%s %s: cannot read it: %s", option, dir, strerror(errno));
		return -1;
	}
	if (!xnf_on_bpffs(parent)) {
		xnf_error("--%s %s is not in bpffs (the folder it would be made in is not, or does not exist): give "
			  "one under a bpffs mount, such as /sys/fs/bpf/xnf-NAME %s", option, dir, NETNS_HINT);
		return -1;
	}
	return 0;
}

/* A --state folder that holds anything xnf does not keep there is another party's: xnf would remove it with its own
 * (xnf stop --drop-state), or read its maps as the NF's. */
static int check_only_kept_state(const char *dir)
{
	static const char *const kept[] = { ".", "..", XNF_STATE_LAYOUT, XNF_STATE_MAPS, XNF_STATE_LINKS };
	DIR *folder = opendir(dir);
	struct dirent *entry;
	int err = 0;

	if (!folder)
		return 0;   /* not there yet: the start makes it */
	while (!err && (entry = readdir(folder))) {
		size_t i = 0;

		while (i < sizeof(kept) / sizeof(kept[0]) && strcmp(entry->d_name, kept[i]))
			i++;
		if (i == sizeof(kept) / sizeof(kept[0])) {
			xnf_error("--state %s holds %s, which xnf does not keep there: give the instance a folder of its own",
				  dir, entry->d_name);
			err = -1;
		}
	}
	closedir(folder);
	return err;
}

int xnf_check_folders(const struct run_options *opt)
{
	if (opt->state_dir && (check_bpffs_folder("state", opt->state_dir) || check_only_kept_state(opt->state_dir)))
		return -1;
	return opt->pin_dir ? check_bpffs_folder("pin", opt->pin_dir) : 0;
}

static int check_rules(const char *path)
{
	char err[1024];

	if (!path || xnf_rules_check_file(path, err, sizeof(err)) >= 0)
		return 0;
	xnf_error("%s", err);
	return -1;
}

static void print_string_or_null(const char *key, const char *value)
{
	printf(", \"%s\": ", key);
	if (value)
		xnf_json_string(stdout, value);
	else
		fputs("null", stdout);
}

static void print_options_read(const struct run_options *opt)
{
	printf("{\"mode\": \"%s\"", opt->mode->name);
	print_string_or_null("name", opt->name);
	printf(", \"ifaces\": [");
	for (__u32 i = 0; i < opt->nifaces; i++) {
		printf("%s", i ? ", " : "");
		xnf_json_string(stdout, opt->ifaces[i]);
	}
	putchar(']');
	print_string_or_null("rules", opt->rules);
	print_string_or_null("state", opt->state_dir);
	print_string_or_null("pin", opt->pin_dir);
	printf("}\n");
}

int xnf_start_check(const struct run_options *opt)
{
	struct xnf_port ports[XNF_MAX_PORTS];

	if (xnf_ports_resolve(opt->ifaces, opt->nifaces, ports) || check_rules(opt->rules) || xnf_check_folders(opt))
		return -1;
	print_options_read(opt);
	return 0;
}
