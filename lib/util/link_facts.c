// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An interface as rtnetlink and the netdev family describe it, a veth's peer
 * wherever it lives, and the namespaces involved (link_facts.h). Netlink
 * through libmnl; the namespace of a peer is found by asking which of the
 * named and the processes' namespaces this one numbers with the peer's id.
 */
#include <xnf/runtime/link_facts.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3
#define NAMED_NETNS_DIR "/run/netns"

/* ------------------------------------------------------------------ one request, one answer */

struct answer {
	mnl_cb_t parse;
	void *out;
};

/* Sends the request on a fresh socket of bus and runs parse on each message of the answer. 0 or -errno. */
static int transact(int bus, struct nlmsghdr *request, mnl_cb_t parse, void *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct timeval timeout = { .tv_sec = 1 };
	struct mnl_socket *nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	unsigned int seq = (unsigned int)time(NULL), portid;
	int rc;

	if (!nl)
		return -errno;
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	request->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, request, request->nlmsg_len) < 0) {
		rc = -errno;
		goto out;
	}
	rc = MNL_CB_OK;
	while (rc > MNL_CB_STOP) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0) {
			rc = -errno;
			break;
		}
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, parse, out);
		if (rc < 0)
			rc = -errno;
		if (!(request->nlmsg_flags & NLM_F_DUMP) && rc >= 0)
			break;
	}
out:
	mnl_socket_close(nl);
	return rc < 0 ? rc : 0;
}

/* A request of type with the family's header of header_len bytes after it (returned, zeroed). */
static void *start_request(char *buf, __u16 type, size_t header_len, struct nlmsghdr **nlh)
{
	*nlh = mnl_nlmsg_put_header(buf);
	(*nlh)->nlmsg_type = type;
	(*nlh)->nlmsg_flags = NLM_F_REQUEST;
	return mnl_nlmsg_put_extra_header(*nlh, header_len);
}

/* ------------------------------------------------------------------ RTM_GETLINK */

static int link_info_attr(const struct nlattr *attr, void *data)
{
	struct xnf_link *link = data;

	if (mnl_attr_get_type(attr) == IFLA_INFO_KIND && mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
		snprintf(link->kind, sizeof(link->kind), "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

static int xdp_attr(const struct nlattr *attr, void *data)
{
	struct xnf_link *link = data;

	if (mnl_attr_get_type(attr) == IFLA_XDP_ATTACHED && mnl_attr_validate(attr, MNL_TYPE_U8) == 0)
		link->xdp_attached = mnl_attr_get_u8(attr) != XDP_ATTACHED_NONE;
	if (mnl_attr_get_type(attr) == IFLA_XDP_PROG_ID && mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
		link->xdp_prog_id = mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static __u32 u32_of(const struct nlattr *attr, __u32 otherwise)
{
	return mnl_attr_validate(attr, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(attr) : otherwise;
}

static int link_attr(const struct nlattr *attr, void *data)
{
	struct xnf_link *link = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_IFNAME:
		if (mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
			snprintf(link->name, sizeof(link->name), "%s", mnl_attr_get_str(attr));
		break;
	case IFLA_LINK:
		link->peer_ifindex = (int)u32_of(attr, 0);
		break;
	case IFLA_LINK_NETNSID:
		link->peer_nsid = (int)u32_of(attr, (__u32)XNF_NSID_SAME);
		break;
	case IFLA_MTU:
		link->mtu = u32_of(attr, 0);
		break;
	case IFLA_NUM_RX_QUEUES:
		link->rx_queues = u32_of(attr, 0);
		break;
	case IFLA_NUM_TX_QUEUES:
		link->tx_queues = u32_of(attr, 0);
		break;
	case IFLA_LINKINFO:
		mnl_attr_parse_nested(attr, link_info_attr, link);
		break;
	case IFLA_XDP:
		mnl_attr_parse_nested(attr, xdp_attr, link);
		break;
	case IFLA_STATS64:
		if (mnl_attr_get_payload_len(attr) >= sizeof(struct rtnl_link_stats64))
			link->tx_dropped = ((const struct rtnl_link_stats64 *)mnl_attr_get_payload(attr))->tx_dropped;
		break;
	case IFLA_PARENT_DEV_NAME:
		if (mnl_attr_validate(attr, MNL_TYPE_STRING) == 0) {
			link->hardware = true;
			snprintf(link->parent, sizeof(link->parent), "%s", mnl_attr_get_str(attr));
		}
		break;
	}
	return MNL_CB_OK;
}

static int parse_link(const struct nlmsghdr *nlh, void *data)
{
	struct xnf_link *link = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	link->ifindex = ifi->ifi_index;
	link->flags = ifi->ifi_flags;
	return mnl_attr_parse(nlh, sizeof(*ifi), link_attr, link);
}

int xnf_link_get(int ifindex, int nsid, struct xnf_link *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi = start_request(buf, RTM_GETLINK, sizeof(*ifi), &nlh);

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (nsid != XNF_NSID_SAME)
		mnl_attr_put_u32(nlh, IFLA_TARGET_NETNSID, (__u32)nsid);
	memset(out, 0, sizeof(*out));
	out->peer_nsid = XNF_NSID_SAME;
	return transact(NETLINK_ROUTE, nlh, parse_link, out) ?: (out->ifindex ? 0 : -ENODEV);
}

/* ------------------------------------------------------------------ RTM_GETTFILTER: a clsact qdisc's filters */

struct filter_list {
	struct xnf_tc_filter *out;
	__u32 max;
	__u32 count;
	struct xnf_tc_filter now;   /* the message being read */
};

static int bpf_options_attr(const struct nlattr *attr, void *data)
{
	struct xnf_tc_filter *f = data;

	if (mnl_attr_get_type(attr) == TCA_BPF_NAME && mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
		snprintf(f->name, sizeof(f->name), "%s", mnl_attr_get_str(attr));
	else if (mnl_attr_get_type(attr) == TCA_BPF_ID && mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
		f->prog_id = mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static int filter_attr(const struct nlattr *attr, void *data)
{
	struct xnf_tc_filter *f = data;

	if (mnl_attr_get_type(attr) == TCA_KIND && mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
		snprintf(f->kind, sizeof(f->kind), "%s", mnl_attr_get_str(attr));
	else if (mnl_attr_get_type(attr) == TCA_OPTIONS && strcmp(f->kind, "bpf") == 0)
		mnl_attr_parse_nested(attr, bpf_options_attr, f);
	return MNL_CB_OK;
}

/* One message per filter, and one more for each priority's head: a filter counts once, by its priority. */
static int parse_filter(const struct nlmsghdr *nlh, void *data)
{
	struct filter_list *list = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);

	memset(&list->now, 0, sizeof(list->now));
	list->now.pref = (__u16)(tcm->tcm_info >> 16);
	mnl_attr_parse(nlh, sizeof(*tcm), filter_attr, &list->now);
	for (__u32 i = 0; i < list->count && i < list->max; i++) {
		if (list->out[i].pref == list->now.pref) {
			if (!list->out[i].prog_id)
				list->out[i] = list->now;
			return MNL_CB_OK;
		}
	}
	if (list->count < list->max)
		list->out[list->count] = list->now;
	list->count++;
	return MNL_CB_OK;
}

int xnf_clsact_filters(int ifindex, bool egress, struct xnf_tc_filter *out, __u32 max, __u32 *count)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct tcmsg *tcm = start_request(buf, RTM_GETTFILTER, sizeof(*tcm), &nlh);
	struct filter_list list = { .out = out, .max = max };
	int rc;

	nlh->nlmsg_flags |= NLM_F_DUMP;
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = TC_H_MAKE(TC_H_CLSACT, egress ? TC_H_MIN_EGRESS : TC_H_MIN_INGRESS);
	rc = transact(NETLINK_ROUTE, nlh, parse_filter, &list);
	*count = list.count < max ? list.count : max;
	return rc == -EINVAL || rc == -ENOENT ? 0 : rc;   /* no clsact qdisc: no filters */
}

/* ------------------------------------------------------------------ one attribute of an answer */

/* The attribute of type `type` (an integer of its size), copied to out. */
struct one_attr {
	__u16 type;
	enum mnl_attr_data_type kind; /* MNL_TYPE_U16, U32 or U64 */
	size_t header;                /* the family's header before the attributes */
	void *out;
};

static int take_attr(const struct nlattr *attr, void *data)
{
	struct one_attr *want = data;

	if (mnl_attr_get_type(attr) != want->type || mnl_attr_validate(attr, want->kind))
		return MNL_CB_OK;
	if (want->kind == MNL_TYPE_U16)
		*(__u16 *)want->out = mnl_attr_get_u16(attr);
	else if (want->kind == MNL_TYPE_U32)
		*(__u32 *)want->out = mnl_attr_get_u32(attr);
	else
		*(__u64 *)want->out = mnl_attr_get_u64(attr);
	return MNL_CB_OK;
}

static int parse_one(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, ((struct one_attr *)data)->header, take_attr, data);
}

/* ------------------------------------------------------------------ the netdev family's XDP features */

static struct nlmsghdr *genl_request(char *buf, __u16 type, __u8 cmd)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl = start_request(buf, type, sizeof(*genl), &nlh);

	genl->cmd = cmd;
	genl->version = 1;
	return nlh;
}

int xnf_netdev_xdp_features(int ifindex, __u64 *features)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = genl_request(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	__u16 family = 0;
	int err;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	err = transact(NETLINK_GENERIC, nlh, parse_one,
		       &(struct one_attr){ CTRL_ATTR_FAMILY_ID, MNL_TYPE_U16, sizeof(struct genlmsghdr), &family });
	if (err)
		return err;
	if (!family)
		return -ENOENT;
	nlh = genl_request(buf, family, NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, (__u32)ifindex);
	*features = 0;
	return transact(NETLINK_GENERIC, nlh, parse_one,
			&(struct one_attr){ NETDEV_A_DEV_XDP_FEATURES, MNL_TYPE_U64, sizeof(struct genlmsghdr), features });
}

/* ------------------------------------------------------------------ namespaces */

/* The id this namespace gives the namespace of ns_fd (NETNSA_NSID_NOT_ASSIGNED when none), or -errno. */
static int nsid_of(int ns_fd)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtgenmsg *g = start_request(buf, RTM_GETNSID, sizeof(*g), &nlh);
	int nsid = NETNSA_NSID_NOT_ASSIGNED, err;

	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (__u32)ns_fd);
	err = transact(NETLINK_ROUTE, nlh, parse_one, &(struct one_attr){ NETNSA_NSID, MNL_TYPE_U32, sizeof(*g), &nsid });
	return err ? err : nsid;
}

/* A namespace file seen already (many processes share one namespace): by inode. */
struct seen {
	ino_t *inodes;
	size_t n, cap;
};

static bool seen_before(struct seen *s, ino_t inode)
{
	ino_t *grown;

	for (size_t i = 0; i < s->n; i++) {
		if (s->inodes[i] == inode)
			return true;
	}
	if (s->n == s->cap) {
		grown = realloc(s->inodes, (s->cap ? 2 * s->cap : 64) * sizeof(*grown));
		if (!grown)
			return false;
		s->inodes = grown;
		s->cap = s->cap ? 2 * s->cap : 64;
	}
	s->inodes[s->n++] = inode;
	return false;
}

/* What a namespace file must be: this namespace's number nsid for it, or this inode and cookie. */
struct wanted {
	int nsid;
	__u64 inode;
	__u64 cookie;
};

static bool is_wanted(int fd, const struct stat *st, const struct wanted *w)
{
	__u64 cookie;
	int sock;

	if (!w->inode)
		return nsid_of(fd) == w->nsid;
	if (st->st_ino != w->inode || (sock = xnf_netns_socket(fd, &cookie)) < 0)
		return false;
	close(sock);
	return cookie == w->cookie;
}

/* Opens path if it is a namespace not seen yet, and the one wanted: the fd, or -1. */
static int try_namespace(const char *path, const struct wanted *w, struct seen *seen)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || seen_before(seen, st.st_ino) || (w->inode && st.st_ino != w->inode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (is_wanted(fd, &st, w))
		return fd;
	close(fd);
	return -1;
}

static int search_dir(const char *dir, const char *entry_fmt, bool numeric, const struct wanted *w, struct seen *seen,
		      char *how, size_t len, const char *how_fmt)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char path[512];

		if (e->d_name[0] == '.' || (numeric && (e->d_name[0] < '0' || e->d_name[0] > '9')))
			continue;
		snprintf(path, sizeof(path), entry_fmt, dir, e->d_name);
		fd = try_namespace(path, w, seen);
		if (fd >= 0 && how)
			snprintf(how, len, how_fmt, e->d_name);
	}
	closedir(d);
	return fd;
}

/* The named namespaces first (a user types their names), then every process's. */
static int find_namespace(const struct wanted *w, char *how_to_enter, size_t len)
{
	struct seen seen = { 0 };
	int fd = search_dir(NAMED_NETNS_DIR, "%s/%s", false, w, &seen, how_to_enter, len, "ip netns exec %s");

	if (fd < 0)
		fd = search_dir("/proc", "%s/%s/ns/net", true, w, &seen, how_to_enter, len,
				"nsenter --net=/proc/%s/ns/net");
	free(seen.inodes);
	return fd >= 0 ? fd : -ENOENT;
}

int xnf_netns_open(int nsid, char *how_to_enter, size_t len)
{
	struct wanted w = { .nsid = nsid };

	return nsid < 0 ? -EINVAL : find_namespace(&w, how_to_enter, len);
}

bool xnf_netns_exists(__u64 cookie, __u64 inode)
{
	struct wanted w = { .inode = inode, .cookie = cookie };
	int fd = inode ? find_namespace(&w, NULL, 0) : -ENOENT;

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

struct in_namespace {
	int ns_fd;
	int sock;
	__u64 cookie;
	int err;
};

static int socket_here(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (sock < 0)
		return -errno;
	if (getsockopt(sock, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len)) {
		int err = -errno;

		close(sock);
		return err;
	}
	return sock;
}

/* On a thread of its own: setns() moves only the calling thread, and it ends with the thread. */
static void *make_socket_there(void *arg)
{
	struct in_namespace *job = arg;

	if (setns(job->ns_fd, CLONE_NEWNET)) {
		job->err = -errno;
		return NULL;
	}
	job->sock = socket_here(&job->cookie);
	return NULL;
}

int xnf_netns_socket(int ns_fd, __u64 *cookie)
{
	struct in_namespace job = { .ns_fd = ns_fd, .sock = -1 };
	pthread_t thread;
	int err = pthread_create(&thread, NULL, make_socket_there, &job);

	if (err)
		return -err;
	pthread_join(thread, NULL);
	if (job.err)
		return job.err;
	*cookie = job.cookie;
	return job.sock;
}

int xnf_netns_cookie_here(__u64 *cookie)
{
	int sock = socket_here(cookie);

	if (sock < 0)
		return sock;
	close(sock);
	return 0;
}

int xnf_iface_mac(const char *name, __u8 mac[6])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (rc)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}
