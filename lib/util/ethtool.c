// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Offload features by name, queue counts and the driver, through SIOCETHTOOL (ethtool.h). */
#include <xnf/runtime/ethtool.h>

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

const char *const xnf_tx_checksum_features[] = {
	"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-sctp", "tx-checksum-fcoe-crc",
	NULL,
};

struct xnf_features {
	__u32 count;
	char (*names)[ETH_GSTRING_LEN];
	struct ethtool_gfeatures *state;
};

static int ethtool(int sock, const char *ifname, void *cmd)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(sock, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static __u32 blocks_for(__u32 count)
{
	return (count + 31) / 32;
}

static int feature_count(int sock, const char *ifname, __u32 *count)
{
	struct {
		struct ethtool_sset_info info;
		__u32 data[1];
	} sset = { .info = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_FEATURES } };
	int err = ethtool(sock, ifname, &sset);

	if (err)
		return err;
	*count = sset.info.sset_mask ? sset.data[0] : 0;
	return 0;
}

struct xnf_features *xnf_features_read(int sock, const char *ifname)
{
	struct xnf_features *f = calloc(1, sizeof(*f));
	struct ethtool_gstrings *strings = NULL;
	int err = -ENOMEM;

	if (!f || (err = feature_count(sock, ifname, &f->count)))
		goto fail;
	strings = calloc(1, sizeof(*strings) + (size_t)f->count * ETH_GSTRING_LEN);
	f->state = calloc(1, sizeof(*f->state) + blocks_for(f->count) * sizeof(f->state->features[0]));
	if (!strings || !f->state)
		goto fail;
	strings->cmd = ETHTOOL_GSTRINGS;
	strings->string_set = ETH_SS_FEATURES;
	strings->len = f->count;
	f->state->cmd = ETHTOOL_GFEATURES;
	f->state->size = blocks_for(f->count);
	if ((err = ethtool(sock, ifname, strings)) || (err = ethtool(sock, ifname, f->state)))
		goto fail;
	f->names = malloc((size_t)f->count * ETH_GSTRING_LEN);
	if (!f->names) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(f->names, strings->data, (size_t)f->count * ETH_GSTRING_LEN);
	free(strings);
	return f;
fail:
	free(strings);
	xnf_features_free(f);
	errno = -err;
	return NULL;
}

void xnf_features_free(struct xnf_features *f)
{
	if (!f)
		return;
	free(f->names);
	free(f->state);
	free(f);
}

static int index_of(const struct xnf_features *f, const char *name)
{
	for (__u32 i = 0; i < f->count; i++) {
		if (strncmp(f->names[i], name, ETH_GSTRING_LEN) == 0)
			return (int)i;
	}
	return -1;
}

bool xnf_feature_active(const struct xnf_features *f, const char *name)
{
	int i = index_of(f, name);

	return i >= 0 && (f->state->features[i / 32].active & (1u << (i % 32)));
}

bool xnf_features_any_active(const struct xnf_features *f, const char *const names[])
{
	for (size_t i = 0; names[i]; i++) {
		if (xnf_feature_active(f, names[i]))
			return true;
	}
	return false;
}

int xnf_features_set(int sock, const char *ifname, const struct xnf_features *f, const char *const names[], bool on)
{
	__u32 nblocks = blocks_for(f->count);
	struct ethtool_sfeatures *set = calloc(1, sizeof(*set) + nblocks * sizeof(set->features[0]));
	int err;

	if (!set)
		return -ENOMEM;
	set->cmd = ETHTOOL_SFEATURES;
	set->size = nblocks;
	for (size_t n = 0; names[n]; n++) {
		int i = index_of(f, names[n]);

		if (i < 0)
			continue;
		set->features[i / 32].valid |= 1u << (i % 32);
		if (on)
			set->features[i / 32].requested |= 1u << (i % 32);
	}
	err = ethtool(sock, ifname, set);
	free(set);
	return err;
}

int xnf_channels(int sock, const char *ifname, __u32 *rx, __u32 *tx)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int err = ethtool(sock, ifname, &ch);

	if (err)
		return err;
	*rx = ch.rx_count + ch.combined_count;
	*tx = ch.tx_count + ch.combined_count;
	return 0;
}

int xnf_driver(int sock, const char *ifname, char *driver, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	int err = ethtool(sock, ifname, &info);

	if (!err)
		snprintf(driver, len, "%s", info.driver);
	return err;
}
