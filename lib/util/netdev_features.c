// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An interface's XDP features, from the kernel's "netdev" generic netlink
 * family (Linux 6.3+): one request for the family's id, one for the device.
 * The constants are the kernel's UAPI (linux/netdev.h), which the C library
 * headers here are too old to have.
 */
#include <xnf/runtime/netdev_features.h>

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3

#define BUFFER_SIZE 4096

struct request {
	struct nlmsghdr nl;
	struct genlmsghdr genl;
	char attrs[64];
};

static void add_attr(struct request *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nl.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (__u16)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nl.nlmsg_len = NLMSG_ALIGN(r->nl.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends r and finds attribute want in the answer; copies up to len bytes of it to out. */
static int transact(int fd, struct request *r, __u16 want, void *out, size_t len)
{
	char buf[BUFFER_SIZE];
	struct nlmsghdr *nl = (struct nlmsghdr *)buf;
	ssize_t n;

	if (send(fd, r, r->nl.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nl, (size_t)n))
		return -EBADMSG;
	if (nl->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nl))->error ?: -ENOENT;
	for (struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nl) + GENL_HDRLEN);
	     (char *)a + NLA_HDRLEN <= buf + n && a->nla_len >= NLA_HDRLEN;
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		if ((a->nla_type & NLA_TYPE_MASK) == want) {
			size_t have = a->nla_len - NLA_HDRLEN;

			memcpy(out, (char *)a + NLA_HDRLEN, have < len ? have : len);
			return 0;
		}
	}
	return -ENOENT;
}

static void start(struct request *r, __u16 type, __u8 cmd)
{
	memset(r, 0, sizeof(*r));
	r->nl.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nl.nlmsg_type = type;
	r->nl.nlmsg_flags = NLM_F_REQUEST;
	r->genl.cmd = cmd;
	r->genl.version = 1;
}

int xnf_netdev_xdp_features(int ifindex, __u64 *features)
{
	struct timeval timeout = { .tv_sec = 1 };
	struct request r;
	__u16 family = 0;
	__u32 index = (__u32)ifindex;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), err;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	start(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	add_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME));
	err = transact(fd, &r, CTRL_ATTR_FAMILY_ID, &family, sizeof(family));
	if (!err) {
		*features = 0;
		start(&r, family, NETDEV_CMD_DEV_GET);
		add_attr(&r, NETDEV_A_DEV_IFINDEX, &index, sizeof(index));
		err = transact(fd, &r, NETDEV_A_DEV_XDP_FEATURES, features, sizeof(*features));
	}
	close(fd);
	return err;
}
