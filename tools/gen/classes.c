// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "classes.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>

#define CLASS_KEYS "share, saddr, daddr, sport, dport, proto, flows, vary, vlan, size, tunnel, gnb, upf, teid, qfi"

int gen_parse_addr(const char *what, const char *text, struct frame_spec *spec, bool source, int *prefix_len)
{
	char addr[INET6_ADDRSTRLEN + 8], *slash;
	__u8 buf[16];
	long len = -1;

	snprintf(addr, sizeof(addr), "%s", text);
	slash = strchr(addr, '/');
	if (slash) {
		char *end;

		*slash = '\0';
		len = strtol(slash + 1, &end, 10);
		if (!slash[1] || *end || len < 0) {
			xnf_error("%s: '%s' is not an address or ADDR/LEN", what, text);
			return -1;
		}
	}
	/* One family per side: setting one clears the other, so a class can change a run's family. */
	if (inet_pton(AF_INET, addr, buf) == 1 && len <= 32) {
		memcpy(source ? (void *)&spec->src4 : (void *)&spec->dst4, buf, 4);
		memset(source ? spec->src6 : spec->dst6, 0, 16);
		spec->ipv6 = false;
	} else if (inet_pton(AF_INET6, addr, buf) == 1 && len <= 128) {
		memcpy(source ? spec->src6 : spec->dst6, buf, 16);
		*(source ? &spec->src4 : &spec->dst4) = 0;
		spec->ipv6 = true;
	} else {
		xnf_error("%s: '%s' is not an IPv4 or IPv6 address (or prefix)", what, text);
		return -1;
	}
	*prefix_len = (int)len;
	return 0;
}

static bool is_ipv6_side(const struct frame_spec *f, bool source)
{
	static const __u8 zero6[16];

	return memcmp(source ? f->src6 : f->dst6, zero6, 16) != 0;
}

bool gen_spec_one_family(struct frame_spec *spec)
{
	if (is_ipv6_side(spec, true) != is_ipv6_side(spec, false))
		return false;
	spec->ipv6 = is_ipv6_side(spec, true);
	return true;
}

/* A prefix is a range of addresses for the class's flows: they take its addresses in turn. */
static void take_prefix(struct gen_class *c, int prefix_len, bool source, bool flows_given)
{
	int host_bits = (c->frame.ipv6 ? 128 : 32) - prefix_len;
	__u32 in_prefix = host_bits >= 16 ? XNF_GEN_MAX_FLOWS : 1u << host_bits;

	if (prefix_len < 0)
		return;
	c->vary |= source ? XNF_VARY_SADDR : XNF_VARY_DADDR;
	if (!flows_given || c->flows > in_prefix)
		c->flows = in_prefix;
}

/* A tunnelled class (tunnel=gtpu): G-PDUs from gnb to upf, with teid (the first: vary=teid gives each flow the
 * next) and qfi. */
static int take_tunnel_key(struct gen_class *c, const char *what, const char *key, const char *value)
{
	struct frame_spec *f = &c->frame;
	__u32 n;

	if (strcmp(key, "tunnel") == 0) {
		if (strcmp(value, "gtpu")) {
			xnf_error("%s takes gtpu (GTP-U G-PDUs), not '%s'", what, value);
			return -1;
		}
		f->gtpu = true;
	} else if (strcmp(key, "gnb") == 0 || strcmp(key, "upf") == 0) {
		if (inet_pton(AF_INET, value, key[0] == 'g' ? &f->gnb : &f->upf) != 1) {
			xnf_error("%s: '%s' is not an IPv4 address (the tunnel runs over IPv4)", what, value);
			return -1;
		}
	} else if (strcmp(key, "teid") == 0) {
		if (xnf_parse_uint(what + 2, value, 1, 0xffffffffu, &f->teid))
			return -1;
	} else {
		if (xnf_parse_uint(what + 2, value, 0, 63, &n))
			return -1;
		f->qfi = (__u8)n;
	}
	return 0;
}

static int take_key(struct gen_class *c, const char *key, const char *value, bool *flows_given, int *prefixes)
{
	char what[XNF_GEN_CLASS_NAME + 32];
	__u32 n;

	snprintf(what, sizeof(what), "--class %s: %s", c->name, key);   /* xnf_parse_uint writes the "--" itself: what + 2 */
	if (strcmp(key, "share") == 0) {
		char *end;

		c->share = strtod(value, &end);
		if (!*value || *end || !(c->share > 0 && c->share <= 1)) {
			xnf_error("%s takes a fraction of the frames above 0 and at most 1, not '%s'", what, value);
			return -1;
		}
	} else if (strcmp(key, "saddr") == 0 || strcmp(key, "daddr") == 0) {
		return gen_parse_addr(what, value, &c->frame, key[0] == 's', &prefixes[key[0] == 's' ? 0 : 1]);
	} else if (strcmp(key, "sport") == 0 || strcmp(key, "dport") == 0) {
		if (xnf_parse_uint(what + 2, value, 0, 65535, &n))
			return -1;
		*(key[0] == 's' ? &c->frame.sport : &c->frame.dport) = (__u16)n;
	} else if (strcmp(key, "proto") == 0) {
		if (strcmp(value, "udp") && strcmp(value, "tcp") && strcmp(value, "tcp-syn")) {
			xnf_error("%s takes udp, tcp or tcp-syn, not '%s'", what, value);
			return -1;
		}
		c->frame.tcp = strncmp(value, "tcp", 3) == 0;
		c->frame.syn = strcmp(value, "tcp-syn") == 0;
	} else if (strcmp(key, "vlan") == 0) {
		return frame_parse_vlans(what, value, &c->frame);
	} else if (strcmp(key, "size") == 0) {
		if (xnf_parse_uint(what + 2, value, 1, XNF_GEN_MAX_FRAME, &c->frame.size))
			return -1;
		c->size_given = true;
	} else if (strcmp(key, "flows") == 0) {
		if (xnf_parse_uint(what + 2, value, 1, XNF_GEN_MAX_FLOWS, &c->flows))
			return -1;
		*flows_given = true;
	} else if (strcmp(key, "tunnel") == 0 || strcmp(key, "gnb") == 0 || strcmp(key, "upf") == 0 ||
		   strcmp(key, "teid") == 0 || strcmp(key, "qfi") == 0) {
		return take_tunnel_key(c, what, key, value);
	} else if (strcmp(key, "vary") == 0) {
		static const char *const names[] = { "sport", "dport", "saddr", "daddr", "teid" };
		char copy[64], *save = NULL;

		snprintf(copy, sizeof(copy), "%s", value);
		c->vary = 0;
		for (char *f = strtok_r(copy, "+", &save); f; f = strtok_r(NULL, "+", &save)) {
			size_t i = 0;

			while (i < 5 && strcmp(f, names[i]))
				i++;
			if (i == 5) {
				xnf_error("%s: unknown field '%s': join sport, dport, saddr, daddr, teid with +", what, f);
				return -1;
			}
			c->vary |= 1u << i;
		}
	} else {
		xnf_error("--class %s: unknown key '%s': use " CLASS_KEYS, c->name, key);
		return -1;
	}
	return 0;
}

int gen_class_parse(const char *text, const struct gen_class *base, struct gen_class *out)
{
	const char *colon = strchr(text, ':');
	char body[256], *save = NULL;
	int prefixes[2] = { -1, -1 };
	bool flows_given = false;

	*out = *base;
	out->share = 0;
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(out->name)) {
		xnf_error("--class takes NAME:key=value,... (a name up to %d characters), not '%s'",
			  XNF_GEN_CLASS_NAME - 1, text);
		return -1;
	}
	snprintf(out->name, sizeof(out->name), "%.*s", (int)(colon - text), text);
	snprintf(body, sizeof(body), "%s", colon + 1);
	for (char *pair = strtok_r(body, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq) {
			xnf_error("--class %s: '%s' is not key=value (keys: " CLASS_KEYS ")", out->name, pair);
			return -1;
		}
		*eq = '\0';
		if (take_key(out, pair, eq + 1, &flows_given, prefixes))
			return -1;
	}
	if (out->share == 0) {
		xnf_error("--class %s: give its share of the frames, e.g. share=0.3", out->name);
		return -1;
	}
	if (out->frame.gtpu && (!out->frame.gnb || !out->frame.upf || !out->frame.teid)) {
		xnf_error("--class %s: a tunnelled class needs gnb=ADDR, upf=ADDR and teid=N (the first TEID)", out->name);
		return -1;
	}
	if (!out->frame.gtpu && (out->vary & XNF_VARY_TEID)) {
		xnf_error("--class %s: vary=teid needs tunnel=gtpu", out->name);
		return -1;
	}
	if (!gen_spec_one_family(&out->frame)) {
		xnf_error("--class %s: its source and destination must both be IPv4 or both IPv6: give saddr and daddr",
			  out->name);
		return -1;
	}
	take_prefix(out, prefixes[0], true, flows_given);
	take_prefix(out, prefixes[1], false, flows_given || prefixes[0] >= 0);
	return 0;
}

int gen_classes_plan(struct gen_class *classes, __u32 n, __u8 schedule[XNF_GEN_SCHEDULE])
{
	double total = 0, credit[XNF_GEN_MAX_CLASSES] = { 0 };
	__u32 flows = 0, slots = 0;

	for (__u32 i = 0; i < n; i++) {
		total += classes[i].share;
		classes[i].first_flow = flows;
		flows += classes[i].flows;
		for (__u32 j = 0; j < i; j++) {
			if (strcmp(classes[i].name, classes[j].name) == 0) {
				xnf_error("--class %s is given twice: give each class its own name", classes[i].name);
				return -1;
			}
		}
	}
	if (fabs(total - 1.0) > 1e-6) {
		xnf_error("the classes' shares add up to %g: they must add up to 1", total);
		return -1;
	}
	if (flows > XNF_GEN_MAX_FLOWS) {
		xnf_error("the classes have %u flows together: at most %d", flows, XNF_GEN_MAX_FLOWS);
		return -1;
	}
	/* Smooth weighted round robin: every class evenly through the schedule, none in long runs. */
	for (__u32 s = 0; s < XNF_GEN_SCHEDULE; s++) {
		__u32 best = 0;

		for (__u32 i = 0; i < n; i++) {
			credit[i] += classes[i].share;
			if (credit[i] > credit[best])
				best = i;
		}
		credit[best] -= 1.0;
		schedule[s] = (__u8)best;
		classes[best].slots++;
		slots++;
	}
	return slots == XNF_GEN_SCHEDULE ? 0 : -1;
}

unsigned long long gen_classes_frames_per_cycle(const struct gen_class *classes, __u32 n)
{
	unsigned long long most = 0;

	for (__u32 i = 0; i < n; i++) {
		/* the class gets slots of every XNF_GEN_SCHEDULE frames, spread evenly */
		__u32 flows = classes[i].flows ? classes[i].flows : 1;
		unsigned long long frames = ((unsigned long long)flows * XNF_GEN_SCHEDULE + classes[i].slots - 1) /
					    classes[i].slots;

		if (classes[i].slots && frames > most)
			most = frames;
	}
	return most;
}
