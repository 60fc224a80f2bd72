// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --state DIR: the kernel path kept in bpffs across the process's life. The NF's maps are pinned in DIR/maps and
 * each port's bpf_link in DIR/links/PORT, so when the process stops (or is killed) the program stays attached
 * and goes on forwarding with its rules and its sessions; the next start with the same DIR adopts them: the new
 * build's maps reuse the pinned ones, and each link is moved to the new program with bpf_link_update, which
 * swaps it between two frames. DIR/layout holds what the maps are (type, sizes, and their value types as C, from
 * BTF; in a one-entry array map, since bpffs holds BPF objects only): a build whose maps differ is refused with
 * the first difference, never left to misread the state.
 * Removing DIR (rm -r) lets the links go, which detaches the program.
 */
#include <xnf/runtime/xdp_instance.h>
#include <xnf/runtime/xdp_attach.h>
#include <xnf/runtime/log.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* TCX's attach type (Linux 6.6), as tc_attach.c names it. */
#define STATE_TCX_INGRESS 46
#define LAYOUT_MAX (256 * 1024)

/* What outlives the process: every map but libbpf's internal ones and the socket map. Each program keeps a socket
 * map of its own: sockets a new process registers reach only its own program, never one kept from before that
 * hands them frames of another kind (a hybrid's, with their verdicts ahead); and a kept program whose process is
 * gone finds its map empty and carries on without sockets (xnf_cfg.kernel_fallback). */
static bool kept_map(const struct bpf_map *map)
{
	return !bpf_map__is_internal(map) && strcmp(bpf_map__name(map), "xnf_xsks") != 0;
}

static void print_to_file(void *ctx, const char *fmt, va_list args)
{
	vfprintf(ctx, fmt, args);
}

/* One map's line and its value type as C, as the layout file holds it. */
static void describe_map(FILE *out, const struct bpf_object *obj, const struct bpf_map *map)
{
	struct btf *btf = bpf_object__btf(obj);
	__u32 value_type = bpf_map__btf_value_type_id(map);

	fprintf(out, "map %s type %u key %u value %u entries %u flags %u\n", bpf_map__name(map), bpf_map__type(map),
		bpf_map__key_size(map), bpf_map__value_size(map), bpf_map__max_entries(map), bpf_map__map_flags(map));
	if (btf && value_type) {
		struct btf_dump *dump = btf_dump__new(btf, print_to_file, out, NULL);

		if (dump) {
			btf_dump__dump_type(dump, value_type);
			btf_dump__free(dump);
		}
	}
}

/* The layout of this build's maps, as text, after the NF's name; NULL when out of memory. */
static char *layout_of(const struct bpf_object *obj, const char *nf)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct bpf_map *map;

	if (!out)
		return NULL;
	fprintf(out, "nf %s\n", nf ? nf : "?");
	bpf_object__for_each_map(map, obj) {
		if (kept_map(map))
			describe_map(out, obj, map);
	}
	fclose(out);
	return text;
}

/* The layout kept at path: a one-entry array map whose value is the text (bpffs holds BPF objects only). NULL when
 * nothing is kept there. */
static char *read_layout(const char *path)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info), zero = 0;
	int fd = bpf_obj_get(path);
	char *text = NULL;

	if (fd < 0)
		return NULL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.value_size <= LAYOUT_MAX)
		text = calloc(1, info.value_size + 1);
	if (text && bpf_map_lookup_elem(fd, &zero, text)) {
		free(text);
		text = NULL;
	}
	close(fd);
	return text;
}

static int write_layout(const char *path, const char *text)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	__u32 zero = 0, size = (__u32)strlen(text) + 1;
	int fd, err;

	if (size > LAYOUT_MAX)
		return -E2BIG;
	unlink(path);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xnf_layout", sizeof(zero), size, 1, &opts);
	if (fd < 0)
		return fd;
	err = bpf_map_update_elem(fd, &zero, text, BPF_ANY) || bpf_obj_pin(fd, path) ? -errno : 0;
	close(fd);
	return err;
}

/* A map's block in a layout: its "map NAME ..." line and its value type's C, up to the next map's line. */
static const char *find_block(const char *layout, const char *name, size_t *len)
{
	size_t name_len = strlen(name);

	for (const char *at = layout; at && *at; at = strstr(at, "\nmap ") ? strstr(at, "\nmap ") + 1 : NULL) {
		if (strncmp(at, "map ", 4) == 0 && strncmp(at + 4, name, name_len) == 0 && at[4 + name_len] == ' ') {
			const char *next = strstr(at, "\nmap ");

			*len = next ? (size_t)(next + 1 - at) : strlen(at);
			return at;
		}
	}
	return NULL;
}

/* The first line where a kept map's block and this build's differ. */
static void explain_difference(const char *dir, const char *name, const char *kept, size_t kept_len,
			       const char *now, size_t now_len)
{
	const char *kept_end = kept + kept_len, *now_end = now + now_len;

	while (kept < kept_end && now < now_end) {
		size_t a = strcspn(kept, "\n"), b = strcspn(now, "\n");

		if (a != b || strncmp(kept, now, a) != 0) {
			xnf_error("--state %s holds maps this build cannot read: its map %s has \"%.*s\" where this build "
				  "has \"%.*s\"; run a build whose %s is the same, or remove %s to start without its state",
				  dir, name, (int)a, kept, (int)b, now, name, dir);
			return;
		}
		kept += a + 1;
		now += b + 1;
	}
	xnf_error("--state %s holds maps this build cannot read: its map %s is described %s than this build's; remove "
		  "%s to start without its state", dir, name, kept < kept_end ? "longer" : "shorter", dir);
}

/* What the layout is to say from now on: this build's maps, and the kept ones it does not have (still pinned, for a
 * build that has them: the XDP build's own maps while the tc build runs). */
static char *merged_layout(const char *kept, const char *now, const struct bpf_object *obj)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	fputs(now, out);
	for (const char *at = kept; at && *at;) {
		const char *next = strstr(at, "\nmap ");
		size_t block = next ? (size_t)(next + 1 - at) : strlen(at);
		char name[128] = "";

		if (sscanf(at, "map %127s", name) == 1 && !bpf_object__find_map_by_name(obj, name))
			fwrite(at, 1, block, out);
		at += block;
	}
	fclose(out);
	return text;
}

static int make_dirs(const char *dir)
{
	char path[512];

	static const char *const subs[] = { "", "/" XNF_STATE_MAPS, "/" XNF_STATE_LINKS };

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, subs[i]);
		if (mkdir(path, 0700) && errno != EEXIST) {
			xnf_error("--state %s: cannot create %s: %s (it must be in bpffs: /sys/fs/bpf/...)", dir, path,
				  strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The map's kept twin reused, after its block is checked against this build's; a map the state does not hold
 * starts empty (said). */
static int adopt_map(struct xnf_xdp_instance *x, struct bpf_map *map, const char *kept, const char *now)
{
	const char *name = bpf_map__name(map), *kept_block, *now_block;
	size_t kept_len, now_len;
	char path[512];
	int fd;

	kept_block = find_block(kept, name, &kept_len);
	now_block = find_block(now, name, &now_len);
	if (!kept_block) {
		xnf_info("--state %s holds no map %s: it starts empty", x->state_dir, name);
		return 0;
	}
	if (!now_block || kept_len != now_len || memcmp(kept_block, now_block, kept_len) != 0) {
		explain_difference(x->state_dir, name, kept_block, kept_len, now_block ? now_block : "", now_len);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/" XNF_STATE_MAPS "/%s", x->state_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_map__reuse_fd(map, fd)) {
		xnf_error("--state %s: cannot take its map %s back: %s", x->state_dir, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd); /* reuse_fd took a copy */
	return 0;
}

int xnf_state_adopt_maps(struct xnf_xdp_instance *x, const char *dir)
{
	char path[512];
	char *now = layout_of(x->obj, x->nf_name), *kept;
	struct bpf_map *map;
	int err = 0;

	snprintf(x->state_dir, sizeof(x->state_dir), "%s", dir);
	x->state_layout = now; /* written when the maps are kept: libbpf's view of their types changes at load */
	if (!now || make_dirs(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/" XNF_STATE_LAYOUT, dir);
	kept = read_layout(path);
	if (!kept)
		return 0; /* nothing kept yet: this start makes it */
	if (strncmp(kept, now, strcspn(now, "\n") + 1) != 0) {
		xnf_error("--state %s holds the state of %.*s, not of %s: give %s another folder, or remove %s", dir,
			  (int)strcspn(kept + 3, "\n"), strncmp(kept, "nf ", 3) == 0 ? kept + 3 : "another NF",
			  x->nf_name, x->nf_name, dir);
		free(kept);
		return -1;
	}
	bpf_object__for_each_map(map, x->obj) {
		if (kept_map(map) && (err = adopt_map(x, map, kept, now)))
			break;
	}
	if (!err) {
		x->state_layout = merged_layout(kept, now, x->obj);
		free(now);
		x->adopted = true;
	}
	free(kept);
	return err ? -1 : 0;
}

static int pin_maps_and_layout(struct xnf_xdp_instance *x)
{
	char path[512];
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, x->obj) {
		if (!kept_map(map))
			continue;
		snprintf(path, sizeof(path), "%s/" XNF_STATE_MAPS "/%s", x->state_dir, bpf_map__name(map));
		if (access(path, F_OK) == 0)
			continue;
		if (bpf_obj_pin(bpf_map__fd(map), path)) {
			xnf_error("--state %s: cannot keep map %s: %s", x->state_dir, bpf_map__name(map), strerror(errno));
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%s/" XNF_STATE_LAYOUT, x->state_dir);
	err = x->state_layout ? write_layout(path, x->state_layout) : -ENOMEM;
	if (err) {
		xnf_error("--state %s: cannot keep its layout: %s", x->state_dir, strerror(-err));
		return -1;
	}
	return 0;
}

static int new_link(const struct xnf_xdp_instance *x, const struct xnf_port *port)
{
	LIBBPF_OPTS(bpf_link_create_opts, xdp_opts, .flags = XDP_FLAGS_DRV_MODE);

	return x->hook == XNF_AT_TC ? bpf_link_create(x->prog_fd, port->ifindex, STATE_TCX_INGRESS, NULL) :
				      bpf_link_create(x->prog_fd, port->ifindex, BPF_XDP, &xdp_opts);
}

/*
 * The port's kept link moved to this program (bpf_link_update: between two frames); or, where the kept link is at
 * the other hook (a move between xdp and tc), this program's link made first and the kept one let go after, so
 * that one of the two carries every frame; or a new link made. Then kept.
 */
static int attach_port(struct xnf_xdp_instance *x, __u32 i, bool *made)
{
	const struct xnf_port *port = &x->ports[i];
	char path[512];
	int fd, kept;

	snprintf(path, sizeof(path), "%s/" XNF_STATE_LINKS "/%s", x->state_dir, port->name);
	kept = bpf_obj_get(path);
	if (kept >= 0 && bpf_link_update(kept, x->prog_fd, NULL) == 0) {
		x->link_fds[i] = kept;
		return 0;
	}
	fd = new_link(x, port);
	if (kept >= 0 && (fd == -EBUSY || fd == -EEXIST)) {
		/* The same hook, and the kept program would not be replaced: let it go, then attach. */
		xnf_warn("--state %s: the program kept on %s could not be replaced: attaching anew", x->state_dir,
			 port->name);
		close(kept);
		kept = -1;
		unlink(path);
		fd = new_link(x, port);
	}
	if (fd < 0) {
		xnf_error("cannot attach to %s: %s (with --state the program is attached through a link xnf keeps: "
			  "native XDP or TCX)", port->name, strerror(-fd));
		if (kept >= 0)
			close(kept);
		return -1;
	}
	x->link_fds[i] = fd;
	if (kept >= 0) {   /* the other hook's program let go, now that this one runs */
		close(kept);
		unlink(path);
	}
	if (bpf_obj_pin(fd, path)) {
		xnf_error("--state %s: cannot keep the link on %s: %s", x->state_dir, port->name, strerror(errno));
		return -1;
	}
	*made = true;
	return 0;
}

/* A failed start takes off the links it made: nothing it attached stays behind. */
static void unkeep_links(struct xnf_xdp_instance *x, const bool *made)
{
	char path[512];

	for (__u32 i = 0; i < x->nports; i++) {
		snprintf(path, sizeof(path), "%s/" XNF_STATE_LINKS "/%s", x->state_dir, x->ports[i].name);
		if (made[i])
			unlink(path);
	}
	xnf_xdp_detach_ports(x->link_fds, x->nports);
}

static bool one_of_its_ports(const struct xnf_xdp_instance *x, const char *name)
{
	for (__u32 i = 0; i < x->nports; i++) {
		if (strcmp(x->ports[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Links kept on ports this start was not given: the kept program there would run on ahead of whatever takes the
 * port next, with the old rules. Their pins go, and with them the program (said). */
static void let_go_of_other_ports(const struct xnf_xdp_instance *x)
{
	char path[512];
	struct dirent *entry;
	DIR *links;

	snprintf(path, sizeof(path), "%s/" XNF_STATE_LINKS, x->state_dir);
	links = opendir(path);
	if (!links)
		return;
	while ((entry = readdir(links))) {
		if (entry->d_name[0] == '.' || one_of_its_ports(x, entry->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/" XNF_STATE_LINKS "/%s", x->state_dir, entry->d_name);
		if (unlink(path) == 0)
			xnf_info("--state %s: its program kept on %s is off: %s is not one of its ports now", x->state_dir,
				 entry->d_name, entry->d_name);
	}
	closedir(links);
}

int xnf_state_attach(struct xnf_xdp_instance *x)
{
	bool made[XNF_MAX_PORTS] = { false };

	if (pin_maps_and_layout(x))
		return -1;
	for (__u32 i = 0; i < x->nports; i++) {
		if (attach_port(x, i, &made[i])) {
			unkeep_links(x, made);
			return -1;
		}
	}
	let_go_of_other_ports(x);
	return 0;
}
