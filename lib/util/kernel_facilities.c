// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every kernel facility xnf uses: the one place each is named, with the first upstream version that has it and
 * what xnf does without it; how each is tried is kernel_probes.c. A kernel's version says little (a hardened
 * build refuses what its version has; a vendor's backports what its version lacks), so nothing here compares
 * versions: the version is for the messages.
 *
 * The answers are probed once per boot and kept in the run directory (kernel-facilities, first line the boot's
 * id); XNF_KERNEL_WITHOUT then refuses, on top of them, what it names.
 */
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/control.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kernel_probes.h"

#define WHY_LEN 200
#define CACHE_NAME "kernel-facilities"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

struct facility_row {
	struct xnf_facility_info info;
	int (*probe)(char *why, size_t len);
	bool each_process;    /* probed in every process, never read from the cache: a mount namespace can change it */
};

static const struct facility_row facilities[XNF_NFACILITIES] = {
	[XNF_KF_BPF] = { { "bpf", "BPF programs (the bpf() system call)", "Linux 3.18",
			   "nothing of xnf runs: every NF and tool loads BPF programs" }, xnf_probe_bpf },
	[XNF_KF_BTF] = { { "btf", "the kernel's own types (/sys/kernel/btf/vmlinux)", "Linux 5.4",
			   "NFs whose programs read a map's size (the connection tables) do not load, and the "
			   "egress watch does not run" }, xnf_probe_btf, true },
	[XNF_KF_LIVE_FRAMES] = { { "live_frames", "XDP programs run on live frames (BPF_PROG_RUN with "
				   "BPF_F_TEST_XDP_LIVE_FRAMES)", "Linux 5.18",
				   "xnf-gen sends from its tc program instead (--sender tc, slower: its results say "
				   "so); AF_XDP workers send on the xsk ring and hand passed frames to the stack "
				   "through a TAP device; --sender live and --tx-path live are refused" },
				 xnf_probe_live_frames },
	[XNF_KF_XDP_META] = { { "xdp_meta", "XDP metadata (bpf_xdp_adjust_meta)", "Linux 4.15",
				"hybrid hands the NF's verdict to the workers in 4 bytes pushed in front of the frame "
				"(bpf_xdp_adjust_head) instead of in its metadata" }, NULL },
	[XNF_KF_XDP_FRAGS] = { { "xdp_frags", "XDP on multi-buffer frames (BPF_F_XDP_HAS_FRAGS)", "Linux 5.18",
				 "the XDP modes refuse a port whose MTU needs more than a page per frame" },
			       xnf_probe_xdp_frags },
	[XNF_KF_TCX] = { { "tcx", "tc programs through a bpf_link (TCX)", "Linux 6.6",
			   "--mode tc attaches a clsact filter instead, which stays when the process is killed (tc "
			   "filter del dev PORT ingress takes it off); --state at tc is refused" }, xnf_probe_tcx },
	[XNF_KF_CLSACT] = { { "clsact", "BPF filters in a clsact qdisc", "Linux 4.5",
			      "--mode tc is refused where TCX is refused too, and AF_XDP workers without live frames "
			      "cannot hand passed frames to the stack" }, xnf_probe_clsact },
	[XNF_KF_AFXDP] = { { "afxdp", "AF_XDP sockets", "Linux 4.18", "the modes with AF_XDP sockets are refused" },
			   xnf_probe_afxdp },
	[XNF_KF_AFXDP_SG] = { { "afxdp_sg", "AF_XDP frames of several buffers (XDP_USE_SG)", "Linux 6.6",
				"the modes with AF_XDP sockets refuse a port whose MTU needs more than one UMEM frame" },
			      xnf_probe_afxdp_sg },
	[XNF_KF_BUSY_POLL] = { { "busy_poll", "preferred busy polling (SO_PREFER_BUSY_POLL)", "Linux 5.11",
				 "the -sysc modes are refused" }, xnf_probe_busy_poll },
	[XNF_KF_XSK_TX_BUDGET] = { { "xsk_tx_budget", "the xsk ring's transmit budget (XDP_MAX_TX_SKB_BUDGET)",
				     "Linux 6.17", "--tx-budget is refused" }, xnf_probe_xsk_tx_budget },
	[XNF_KF_XSK_XMIT_BATCH] = { { "xsk_xmit_batch", "the xsk ring's transmit batch (XDP_GENERIC_XMIT_BATCH)",
				      "no Linux release", "--xmit-batch is refused" }, xnf_probe_xsk_xmit_batch },
	[XNF_KF_FREPLACE] = { { "freplace", "freplace programs (libxdp's dispatcher)", "Linux 5.10",
				"--attach libxdp is refused" }, xnf_probe_freplace },
	[XNF_KF_TP_BTF] = { { "tp_btf", "BTF tracepoint programs (tp_btf)", "Linux 5.5",
			      "xnf does not count the frames the kernel drops after an NF's verdict (the egress "
			      "watch); the NF runs" }, xnf_probe_tp_btf },
	[XNF_KF_HELPERS] = { { "helpers", "every BPF helper the SDK's glue calls", "each helper's own",
			       "a program that calls a refused helper does not load: xnf names the helper" }, NULL },
};

#define XDP XNF_HELPER_IN_XDP
#define TC XNF_HELPER_IN_TC
#define TRACING XNF_HELPER_IN_TRACING
#define HELPER(fn, version, users) { BPF_FUNC_##fn, "bpf_" #fn, "Linux " version, users }

/* The helpers the compiled glue, NFs and the lab's programs call, and where: tests/integration/test_kernel.py reads
 * every built object and fails on a helper call that has no row here. */
static const struct xnf_helper_info helpers[] = {
	HELPER(map_lookup_elem, "3.19", XDP | TC | TRACING), HELPER(map_update_elem, "3.19", XDP | TC),
	HELPER(map_delete_elem, "3.19", XDP | TC), HELPER(ktime_get_ns, "4.1", XDP | TC),
	HELPER(get_prandom_u32, "4.1", XDP | TC), HELPER(get_smp_processor_id, "4.1", XDP | TC),
	HELPER(skb_store_bytes, "4.1", TC), HELPER(l4_csum_replace, "4.1", TC), HELPER(clone_redirect, "4.2", TC),
	HELPER(skb_vlan_push, "4.3", TC),
	HELPER(skb_vlan_pop, "4.3", TC), HELPER(redirect, "4.4", TC), HELPER(skb_load_bytes, "4.5", TC),
	HELPER(csum_diff, "4.6", XDP | TC), HELPER(get_hash_recalc, "4.8", TC), HELPER(set_hash_invalid, "4.9", TC),
	HELPER(skb_pull_data, "4.9", TC), HELPER(csum_update, "4.9", TC),
	HELPER(skb_change_head, "4.10", TC), HELPER(xdp_adjust_head, "4.10", XDP), HELPER(skb_adjust_room, "4.13", TC),
	HELPER(set_hash, "4.13", TC),
	HELPER(redirect_map, "4.14", XDP), HELPER(xdp_adjust_meta, "4.15", XDP), HELPER(xdp_adjust_tail, "4.18", XDP),
	HELPER(fib_lookup, "4.18", XDP | TC), HELPER(jiffies64, "5.5", XDP | TC), HELPER(ringbuf_output, "5.8", XDP | TC),
	HELPER(ringbuf_reserve, "5.8", XDP | TC), HELPER(ringbuf_submit, "5.8", XDP | TC),
	HELPER(redirect_peer, "5.10", TC), HELPER(ktime_get_coarse_ns, "5.11", XDP | TC), HELPER(loop, "5.17", XDP | TC),
	HELPER(xdp_get_buff_len, "5.18", XDP), HELPER(xdp_load_bytes, "5.18", XDP), HELPER(xdp_store_bytes, "5.18", XDP),
};
#define NHELPERS (sizeof(helpers) / sizeof(helpers[0]))

enum answer { UNKNOWN, WORKS, REFUSED };

struct state {
	enum answer answer;
	bool overridden;      /* XNF_KERNEL_WITHOUT names it */
	char why[WHY_LEN];
};

static struct {
	bool loaded;
	struct state facility[XNF_NFACILITIES];
	struct state helper[NHELPERS];
	char without[256];    /* XNF_KERNEL_WITHOUT as read */
} table;

static void set_why(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_why(struct state *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- probing */

static enum bpf_prog_type prog_type_of(unsigned user)
{
	return user == XDP ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SCHED_CLS;
}

/* A helper works where each program type the glue calls it from may call it; tracepoints are tp_btf's row. */
static void probe_helper(size_t i)
{
	struct state *s = &table.helper[i];
	unsigned users = helpers[i].users & (XDP | TC);

	s->answer = WORKS;
	for (unsigned type = XDP; type <= TC && s->answer == WORKS; type <<= 1) {
		if ((users & type) && xnf_probe_helper(helpers[i].id, prog_type_of(type), s->why, sizeof(s->why)))
			s->answer = REFUSED;
	}
}

/* xdp_meta is the helper bpf_xdp_adjust_meta in XDP: one answer for both rows, whichever was refused; and helpers is
 * refused where any other helper is (xdp_meta's row says what xnf does without that one). */
static void settle_linked_rows(void)
{
	struct state *meta = &table.facility[XNF_KF_XDP_META], *all = &table.facility[XNF_KF_HELPERS];

	for (size_t i = 0; i < NHELPERS; i++) {
		if (helpers[i].id != BPF_FUNC_xdp_adjust_meta)
			continue;
		if (meta->answer == REFUSED)
			table.helper[i] = *meta;
		else
			*meta = table.helper[i];
	}
	for (size_t i = 0; i < NHELPERS && all->answer != REFUSED; i++) {
		if (table.helper[i].answer != REFUSED || helpers[i].id == BPF_FUNC_xdp_adjust_meta)
			continue;
		all->answer = REFUSED;
		all->overridden = table.helper[i].overridden;
		set_why(all, "%s: %s", helpers[i].name, table.helper[i].why);
	}
}

static void probe_row(size_t f)
{
	struct state *s = &table.facility[f];

	s->why[0] = '\0';
	s->answer = facilities[f].probe(s->why, sizeof(s->why)) ? REFUSED : WORKS;
}

static void probe_each_process(void)
{
	for (size_t f = 0; f < XNF_NFACILITIES; f++) {
		if (facilities[f].each_process)
			probe_row(f);
	}
}

static void probe_everything(void)
{
	libbpf_print_fn_t quiet = libbpf_set_print(NULL); /* a refusal is an answer here, not an error */

	for (size_t f = 0; f < XNF_NFACILITIES; f++) {
		if (facilities[f].probe)
			probe_row(f);
	}
	for (size_t i = 0; i < NHELPERS; i++)
		probe_helper(i);
	table.facility[XNF_KF_HELPERS].answer = WORKS;
	settle_linked_rows();
	libbpf_set_print(quiet);
}

/* ---------------------------------------------------------------- the cache */

static int read_boot_id(char *out, size_t len)
{
	FILE *f = fopen(BOOT_ID_PATH, "re");
	int rc = f && fgets(out, (int)len, f) ? 0 : -1;

	if (f)
		fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return rc;
}

static void cache_path(char *out, size_t len)
{
	snprintf(out, len, "%s/%s", xnf_run_dir(NULL), CACHE_NAME);
}

static struct state *row_named(const char *kind, const char *name)
{
	for (size_t f = 0; *kind == 'f' && f < XNF_NFACILITIES; f++) {
		if (strcmp(facilities[f].info.name, name) == 0)
			return &table.facility[f];
	}
	for (size_t i = 0; *kind == 'h' && i < NHELPERS; i++) {
		if (strcmp(helpers[i].name, name) == 0)
			return &table.helper[i];
	}
	return NULL;
}

/* The cache's rows, "f|h NAME works|refused WHY", each into its row; true where every row got an answer. */
static bool read_rows(FILE *f)
{
	char line[512], kind[2], name[64], answer[16];
	int at;

	while (fgets(line, sizeof(line), f)) {
		struct state *s;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%1s %63s %15s %n", kind, name, answer, &at) != 3 || !(s = row_named(kind, name)))
			continue;
		s->answer = strcmp(answer, "works") == 0 ? WORKS : REFUSED;
		snprintf(s->why, sizeof(s->why), "%s", line + at);
	}
	for (size_t i = 0; i < XNF_NFACILITIES; i++) {
		if (table.facility[i].answer == UNKNOWN)
			return false;
	}
	for (size_t i = 0; i < NHELPERS; i++) {
		if (table.helper[i].answer == UNKNOWN)
			return false;
	}
	return true;
}

static bool read_cache(const char *boot_id)
{
	char path[512], first[128] = "";
	FILE *f;
	bool whole;

	cache_path(path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return false;
	whole = fgets(first, sizeof(first), f) && strcspn(first, "\n") == strlen(boot_id) &&
		strncmp(first, boot_id, strlen(boot_id)) == 0 && read_rows(f);
	fclose(f);
	return whole;
}

static void write_row(FILE *f, char kind, const char *name, const struct state *s)
{
	fprintf(f, "%c %s %s %s\n", kind, name, s->answer == WORKS ? "works" : "refused", s->why);
}

/* Written whole or not at all: another process may be reading it. A run directory we cannot write: no cache. */
static void write_cache(const char *boot_id)
{
	char path[512], tmp[560];
	FILE *f;

	cache_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	mkdir(xnf_run_dir(NULL), 0755);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s\n", boot_id);
	for (size_t i = 0; i < XNF_NFACILITIES; i++)
		write_row(f, 'f', facilities[i].info.name, &table.facility[i]);
	for (size_t i = 0; i < NHELPERS; i++)
		write_row(f, 'h', helpers[i].name, &table.helper[i]);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/* ---------------------------------------------------------------- the override */

static bool refuse_by_name(const char *name)
{
	struct state *s = row_named("f", name);

	if (!s)
		s = row_named("h", name);
	if (!s)
		return false;
	s->answer = REFUSED;
	s->overridden = true;
	set_why(s, "treated as refused: %s names it", XNF_KERNEL_WITHOUT_ENV);
	return true;
}

static void list_names(FILE *out)
{
	for (size_t i = 0; i < XNF_NFACILITIES; i++)
		fprintf(out, "%s%s", i ? ", " : "", facilities[i].info.name);
	fprintf(out, " or a helper's name (bpf_...)");
}

/* A name that is no facility's is a mistake in the environment: said once, and nothing runs on a guess. */
static void apply_override(void)
{
	const char *env = getenv(XNF_KERNEL_WITHOUT_ENV);
	char copy[sizeof(table.without)], *save = NULL;

	if (!env || !*env)
		return;
	snprintf(table.without, sizeof(table.without), "%s", env);
	snprintf(copy, sizeof(copy), "%s", env);
	for (char *name = strtok_r(copy, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
		if (refuse_by_name(name))
			continue;
		fprintf(stderr, "xnf: error: %s names '%s', which is not a kernel facility xnf uses: give ",
			XNF_KERNEL_WITHOUT_ENV, name);
		list_names(stderr);
		fputc('\n', stderr);
		exit(2);
	}
	settle_linked_rows();
}

/* ---------------------------------------------------------------- reading */

/* Only root can probe (bpf(), namespaces): for anyone else every answer is unknown, taken as given, and what
 * they then try fails with its own message about root. */
static void load(void)
{
	char boot_id[128] = "";

	if (table.loaded)
		return;
	table.loaded = true;
	if (geteuid() != 0) {
		for (size_t i = 0; i < XNF_NFACILITIES; i++)
			set_why(&table.facility[i], "not probed: only root can try the kernel's facilities");
		for (size_t i = 0; i < NHELPERS; i++)
			set_why(&table.helper[i], "not probed: only root can try the kernel's facilities");
		apply_override();
		return;
	}
	if (read_boot_id(boot_id, sizeof(boot_id)) || !read_cache(boot_id)) {
		memset(table.facility, 0, sizeof(table.facility));
		memset(table.helper, 0, sizeof(table.helper));
		probe_everything();
		if (boot_id[0])
			write_cache(boot_id);
	} else {
		probe_each_process();
	}
	apply_override();
}

void xnf_kernel_probe_again(void)
{
	char path[512];

	cache_path(path, sizeof(path));
	unlink(path);
	memset(&table, 0, sizeof(table));
	load();
}

const struct xnf_facility_info *xnf_facility(enum xnf_facility f)
{
	return &facilities[f].info;
}

bool xnf_kernel_has(enum xnf_facility f)
{
	load();
	return table.facility[f].answer != REFUSED;
}

const char *xnf_kernel_why(enum xnf_facility f)
{
	load();
	return table.facility[f].answer == REFUSED ? table.facility[f].why : "";
}

const char *xnf_kernel_refusal(enum xnf_facility f, char *out, size_t len)
{
	const struct xnf_facility_info *info = &facilities[f].info;

	snprintf(out, len, "this kernel refuses %s (%s, %s): %s", info->title, info->name, info->since,
		 xnf_kernel_why(f));
	return out;
}

static int helper_index(int id)
{
	for (size_t i = 0; i < NHELPERS; i++) {
		if (helpers[i].id == id)
			return (int)i;
	}
	return -1;
}

void xnf_kernel_say_fallback(enum xnf_facility f)
{
	static bool said[XNF_NFACILITIES];
	char why[512];

	if (said[f])
		return;
	said[f] = true;
	xnf_info("%s; %s", xnf_kernel_refusal(f, why, sizeof(why)), facilities[f].info.without);
}

size_t xnf_helper_count(void)
{
	return NHELPERS;
}

const struct xnf_helper_info *xnf_helper(size_t i)
{
	return i < NHELPERS ? &helpers[i] : NULL;
}

const struct xnf_helper_info *xnf_helper_by_id(int id)
{
	int i = helper_index(id);

	return i < 0 ? NULL : &helpers[i];
}

bool xnf_kernel_has_helper(int id)
{
	int i = helper_index(id);

	load();
	return i < 0 || table.helper[i].answer != REFUSED;
}

const char *xnf_kernel_helper_refusal(int id, char *out, size_t len)
{
	int i = helper_index(id);

	load();
	if (i < 0)
		snprintf(out, len, "this kernel refuses BPF helper %d, which no row of xnf's table names", id);
	else
		snprintf(out, len, "this kernel refuses the helper %s (%s) in the program types xnf calls it "
			 "from: %s", helpers[i].name, helpers[i].since, table.helper[i].why);
	return out;
}

/* ---------------------------------------------------------------- writing the table out */

static const char *answer_name(const struct state *s)
{
	return s->answer == WORKS ? "works" : s->answer == REFUSED ? "refused" : "unknown";
}

static void state_json(FILE *out, const struct state *s)
{
	fprintf(out, ", \"state\": \"%s\", \"why\": ", answer_name(s));
	xnf_json_string(out, s->why);
	fprintf(out, ", \"overridden\": %s", s->overridden ? "true" : "false");
}

static void facility_json(FILE *out, size_t f)
{
	const struct xnf_facility_info *info = &facilities[f].info;

	fprintf(out, "%s{\"name\": ", f ? ", " : "");
	xnf_json_string(out, info->name);
	fprintf(out, ", \"title\": ");
	xnf_json_string(out, info->title);
	fprintf(out, ", \"since\": ");
	xnf_json_string(out, info->since);
	fprintf(out, ", \"without\": ");
	xnf_json_string(out, info->without);
	state_json(out, &table.facility[f]);
	fputc('}', out);
}

static void helper_json(FILE *out, size_t i)
{
	static const char *const users[] = { "xdp", "tc", "tracing" };
	size_t n = 0;

	fprintf(out, "%s{\"name\": \"%s\", \"id\": %d, \"since\": \"%s\", \"program_types\": [", i ? ", " : "",
		helpers[i].name, helpers[i].id, helpers[i].since);
	for (unsigned bit = 0; bit < 3; bit++) {
		if (helpers[i].users & (1u << bit))
			fprintf(out, "%s\"%s\"", n++ ? ", " : "", users[bit]);
	}
	fputc(']', out);
	state_json(out, &table.helper[i]);
	fputc('}', out);
}

void xnf_kernel_table_json(FILE *out)
{
	struct utsname u = { 0 };

	load();
	uname(&u);
	fprintf(out, "{\"release\": ");
	xnf_json_string(out, u.release);
	fprintf(out, ", \"override\": ");
	xnf_json_string(out, table.without);
	fprintf(out, ", \"facilities\": [");
	for (size_t f = 0; f < XNF_NFACILITIES; f++)
		facility_json(out, f);
	fprintf(out, "], \"helpers\": [");
	for (size_t i = 0; i < NHELPERS; i++)
		helper_json(out, i);
	fprintf(out, "]}");
}

void xnf_kernel_table_print(FILE *out)
{
	struct utsname u = { 0 };

	load();
	uname(&u);
	fprintf(out, "kernel %s%s%s\n", u.release, table.without[0] ? ", " XNF_KERNEL_WITHOUT_ENV "=" : "",
		table.without);
	for (size_t f = 0; f < XNF_NFACILITIES; f++) {
		const struct state *s = &table.facility[f];
		const struct xnf_facility_info *info = &facilities[f].info;

		fprintf(out, "  %-15s %-8s %s (%s)\n", info->name, answer_name(s), info->title, info->since);
		if (s->answer != WORKS)
			fprintf(out, "  %-15s %-8s why: %s\n  %-15s %-8s without it: %s\n", "", "", s->why, "", "",
				info->without);
	}
	for (size_t i = 0; i < NHELPERS; i++) {
		if (table.helper[i].answer == REFUSED && helpers[i].id != BPF_FUNC_xdp_adjust_meta)
			fprintf(out, "  %-15s %-8s %s (%s): %s\n", "helper", "refused", helpers[i].name,
				helpers[i].since, table.helper[i].why);
	}
}
