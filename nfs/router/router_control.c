// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --fib kernel in user space: a mirror of the host's routes (main and local
 * tables) and neighbours, read over rtnetlink at start and then about once a
 * second (the housekeeping step), so the native router answers as
 * bpf_fib_lookup does in XDP. A route change reaches it within that second.
 * Each refresh writes every entry it reads with a new generation number and
 * then removes entries of older ones: the table is never empty in between.
 * In the XDP modes the kernel side asks bpf_fib_lookup itself: nothing to do.
 */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xnf/control.h>
#include "router.h"

#define DUMP_BUFFER (1 << 16)

#define MAX_KEY 64

struct mirror {
	struct xnf_map_ref fib4, fib6, neigh, port_mac;
	__u32 generation;
};

static __u32 refreshes;

static bool port_of(int ifindex, __u32 *port)
{
	return xnf_config_port_of(xnf_instance_ports(), (__u32)ifindex, port);
}

/* Sends one dump request and hands every answer to take(); 0 or -errno. */
static int dump(int fd, __u16 type, __u8 family, void (*take)(struct nlmsghdr *, struct mirror *), struct mirror *m)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.rt = { .rtm_family = family },
	};
	char *buf = malloc(DUMP_BUFFER);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		free(buf);
		return -errno;
	}
	for (bool done = false; !done;) {
		ssize_t len = recv(fd, buf, DUMP_BUFFER, 0);

		if (len < 0) {
			rc = -errno;
			break;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)len); nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			take(nh, m);
		}
	}
	free(buf);
	return rc;
}

static void take_route(struct nlmsghdr *nh, struct mirror *m)
{
	struct rtmsg *rt = NLMSG_DATA(nh);
	struct rt_kernel_route route = { .generation = m->generation };
	struct rt_key6 key = { .prefixlen = rt->rtm_dst_len };
	int len = RTM_PAYLOAD(nh), oif = 0, bytes = rt->rtm_family == AF_INET6 ? 16 : 4;

	if (rt->rtm_table != RT_TABLE_MAIN && rt->rtm_table != RT_TABLE_LOCAL)
		return;
	for (struct rtattr *a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_DST)
			memcpy(key.addr, RTA_DATA(a), bytes);
		else if (a->rta_type == RTA_OIF)
			oif = *(int *)RTA_DATA(a);
		else if (a->rta_type == RTA_GATEWAY) {
			memcpy(route.gateway, RTA_DATA(a), bytes);
			route.has_gateway = 1;
		}
	}
	switch (rt->rtm_type) {
	case RTN_UNICAST:
		route.kind = port_of(oif, &route.port) ? RT_KROUTE_UNICAST : RT_KROUTE_ELSEWHERE;
		break;
	case RTN_LOCAL:
		route.kind = RT_KROUTE_LOCAL;
		break;
	case RTN_BLACKHOLE:
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
		route.kind = RT_KROUTE_DROP;
		break;
	default:
		return; /* broadcast, multicast, anycast: not forwarded */
	}
	/* Local routes sit in their own table: they must win over a main-table route of the same prefix. */
	if (rt->rtm_table == RT_TABLE_MAIN && route.kind != RT_KROUTE_LOCAL) {
		struct rt_kernel_route existing;

		if (xnf_map_ref_lookup(rt->rtm_family == AF_INET6 ? &m->fib6 : &m->fib4, &key, &existing) == 0 &&
		    existing.kind == RT_KROUTE_LOCAL && existing.generation == m->generation)
			return;
	}
	xnf_map_ref_update(rt->rtm_family == AF_INET6 ? &m->fib6 : &m->fib4, &key, &route, BPF_ANY);
}

static void take_neighbour(struct nlmsghdr *nh, struct mirror *m)
{
	struct ndmsg *nd = NLMSG_DATA(nh);
	struct rt_neigh_key key = { .family = nd->ndm_family == AF_INET6 ? 6 : 4 };
	struct rt_neigh neigh = { .generation = m->generation };
	int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd));
	bool have_mac = false;
	__u32 port;

	if (!(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)) ||
	    !port_of(nd->ndm_ifindex, &port))
		return;
	for (struct rtattr *a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST)
			memcpy(key.addr, RTA_DATA(a), key.family == 6 ? 16 : 4);
		else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(neigh.mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	if (have_mac)
		xnf_map_ref_update(&m->neigh, &key, &neigh, BPF_ANY);
}

static void take_port_macs(struct mirror *m)
{
	for (__u32 port = 0; port < xnf_instance_ports()->nports; port++) {
		struct rt_port_mac mac = { .set = 1 };

		if (xnf_instance_port_mac(port, mac.mac) == 0)
			xnf_map_ref_update(&m->port_mac, &port, &mac, BPF_ANY);
	}
}

/* Removes the entries an earlier refresh wrote and this one did not: gone from the host. */
static void prune(const struct xnf_map_ref *ref, size_t generation_offset, __u32 generation)
{
	__u8 keys[2][MAX_KEY], value[MAX_KEY], *stale = NULL, *key = keys[0];
	size_t nstale = 0, room = 0;
	__u32 seen;

	/* Two key buffers, taking turns: a map need not read the current key before writing the next. */
	for (int rc = xnf_map_ref_next_key(ref, NULL, key), turn = 1; rc == 0;
	     rc = xnf_map_ref_next_key(ref, key, keys[turn]), key = keys[turn], turn ^= 1) {
		if (xnf_map_ref_lookup(ref, key, value))
			continue;
		memcpy(&seen, value + generation_offset, sizeof(seen));
		if (seen == generation)
			continue;
		if (nstale == room) {
			__u8 *grown = realloc(stale, (room = room ? 2 * room : 64) * ref->key_size);

			if (!grown)
				break;
			stale = grown;
		}
		memcpy(stale + nstale++ * ref->key_size, key, ref->key_size);
	}
	for (size_t i = 0; i < nstale; i++)
		xnf_map_ref_delete(ref, stale + i * ref->key_size);
	free(stale);
}

static bool mirror_wanted(const struct xnf_rules_target *maps, struct mirror *m)
{
	struct xnf_map_ref config;
	__u32 slot = RT_SETTING_FIB_KERNEL, on = 0;

	if (xnf_map_find(maps, "rt_config", &config) || xnf_map_ref_lookup(&config, &slot, &on) || !on)
		return false;
	/* Kernel maps: the XDP program asks bpf_fib_lookup, the mirror would be unused. */
	return config.native && !xnf_map_find(maps, "rt_kfib4", &m->fib4) &&
	       !xnf_map_find(maps, "rt_kfib6", &m->fib6) && !xnf_map_find(maps, "rt_kneigh", &m->neigh) &&
	       !xnf_map_find(maps, "rt_kport_mac", &m->port_mac);
}

static int rt_mirror(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct mirror m = { 0 };
	int fd, rc;

	if (!mirror_wanted(maps, &m))
		return 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open rtnetlink to read the host's routes: %s", strerror(errno));
		return -1;
	}
	m.generation = ++refreshes;
	take_port_macs(&m);
	/* Local first: take_route keeps a local entry over a main-table one of the same prefix. */
	rc = dump(fd, RTM_GETROUTE, AF_INET, take_route, &m);
	if (!rc)
		rc = dump(fd, RTM_GETROUTE, AF_INET6, take_route, &m);
	if (!rc)
		rc = dump(fd, RTM_GETNEIGH, AF_UNSPEC, take_neighbour, &m);
	close(fd);
	if (rc) {
		snprintf(err, errlen, "cannot read the host's routes: %s", strerror(-rc));
		return -1;
	}
	prune(&m.fib4, offsetof(struct rt_kernel_route, generation), m.generation);
	prune(&m.fib6, offsetof(struct rt_kernel_route, generation), m.generation);
	prune(&m.neigh, offsetof(struct rt_neigh, generation), m.generation);
	return 0;
}

static void rt_refresh(const struct xnf_rules_target *maps)
{
	char err[256];

	if (rt_mirror(maps, err, sizeof(err)))
		fprintf(stderr, "xnf: router: %s\n", err);
}

XNF_EXPORT_START(router, rt_mirror);
XNF_EXPORT_HOUSEKEEPING(router, rt_refresh);
