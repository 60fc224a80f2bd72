// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reads a driver's own counters (ethtool -S) through SIOCETHTOOL. xnf-gen needs
 * veth's xdp_xmit_errors: frames the interface refused when the generator
 * handed them over (its peer's ring was full), which never left at all.
 */
#include "iface_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = { 0 };

	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

static int stats_count(int fd, const char *ifname)
{
	struct {
		struct ethtool_sset_info info;
		__u32 len;
	} sset = { .info = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS } };

	if (ethtool(fd, ifname, &sset) || !(sset.info.sset_mask & (1ull << ETH_SS_STATS)))
		return -1;
	return (int)sset.len;
}

long long iface_stat_sum(const char *ifname, const char *suffix)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), n = fd < 0 ? -1 : stats_count(fd, ifname);
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *values = NULL;
	long long sum = -1;
	size_t suffix_len = strlen(suffix);

	if (n <= 0)
		goto out;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	values = calloc(1, sizeof(*values) + (size_t)n * sizeof(__u64));
	if (!names || !values)
		goto out;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = (__u32)n;
	values->cmd = ETHTOOL_GSTATS;
	values->n_stats = (__u32)n;
	if (ethtool(fd, ifname, names) || ethtool(fd, ifname, values))
		goto out;
	sum = 0;
	for (int i = 0; i < n; i++) {
		const char *name = (const char *)names->data + (size_t)i * ETH_GSTRING_LEN;
		size_t len = strnlen(name, ETH_GSTRING_LEN);

		if (len >= suffix_len && memcmp(name + len - suffix_len, suffix, suffix_len) == 0)
			sum += (long long)values->data[i];
	}
out:
	free(names);
	free(values);
	if (fd >= 0)
		close(fd);
	return sum;
}
