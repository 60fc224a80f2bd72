// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --peers fix: what xnf changes on a veth peer it can reach, and puts back.
 * GRO on, where the port takes no XDP frames (a veth sends XDP frames only to
 * a peer with an XDP program or GRO); checksum offload off, where the peer's
 * stack leaves TCP/UDP checksums unfinished (its stack then finishes them as
 * it copies the data, cheaper than a second pass in XDP). Each change is
 * journaled first (settings_journal.h) with its old value.
 */
#include <xnf/runtime/port_checks.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xnf/runtime/ethtool.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/settings_journal.h>

/* A journaled setting: "feature NAME" with old value "on"/"off", or "features tx-checksum" with the names that
 * were on, joined by commas. */
#define GRO_SETTING "feature " XNF_FEATURE_GRO
#define TX_CSUM_SETTING "features tx-checksum"

/* Turns the comma-joined names of value on (or, for "off", GRO off): the journal's old value put back. */
static int put_back(int sock, const char *ifname, const char *setting, const char *value)
{
	char names_buf[XNF_JOURNAL_VALUE_LEN], *save = NULL;
	const char *names[8] = { 0 };
	struct xnf_features *f = xnf_features_read(sock, ifname);
	size_t n = 0;
	int err;

	if (!f)
		return -errno;
	if (strcmp(setting, GRO_SETTING) == 0) {
		names[0] = XNF_FEATURE_GRO;
		err = xnf_features_set(sock, ifname, f, names, strcmp(value, "on") == 0);
	} else {
		snprintf(names_buf, sizeof(names_buf), "%s", value);
		for (char *t = strtok_r(names_buf, ",", &save); t && n < 7; t = strtok_r(NULL, ",", &save))
			names[n++] = t;
		err = n ? xnf_features_set(sock, ifname, f, names, true) : 0;
	}
	xnf_features_free(f);
	return err;
}

struct recovery {
	struct xnf_peer *peer;
};

static int restore_journaled(const struct xnf_journaled_setting *s, void *ctx)
{
	struct xnf_peer *peer = ((struct recovery *)ctx)->peer;
	int err = put_back(peer->sock, peer->link.name, s->setting, s->old_value);

	if (err)
		xnf_warn("%s: cannot put %s back to '%s' as an instance that did not stop left it: %s",
			 peer->link.name, s->setting, s->old_value, strerror(-err));
	else
		xnf_warn("%s: put %s back to '%s', as it was before an instance that did not stop changed it",
			 peer->link.name, s->setting, s->old_value);
	return err;
}

/* Journals setting=old, then applies names on or off; says what it turned (what) and why. */
static int change(struct xnf_port_facts *f, const char *dir, struct xnf_peer_changes *changes, const char *setting,
		  const char *old, const char *const names[], bool on, const char *what, const char *why)
{
	struct xnf_peer *peer = &f->peer;
	struct xnf_journaled_setting s = { .netns_cookie = peer->cookie, .netns_inode = peer->ns_inode,
					   .ifindex = peer->link.ifindex };
	struct xnf_features *features;
	int item = changes->count, err;

	snprintf(s.ifname, sizeof(s.ifname), "%s", peer->link.name);
	snprintf(s.setting, sizeof(s.setting), "%s", setting);
	snprintf(s.old_value, sizeof(s.old_value), "%s", old);
	err = xnf_journal_write(dir, &s, changes->items[item].journal, sizeof(changes->items[item].journal));
	if (err) {
		xnf_error("cannot write down %s's %s in %s (%s): without it a killed instance could not have it put "
			  "back", peer->link.name, setting, dir, strerror(-err));
		return -1;
	}
	features = xnf_features_read(peer->sock, peer->link.name);
	err = features ? xnf_features_set(peer->sock, peer->link.name, features, names, on) : -errno;
	xnf_features_free(features);
	if (err < 0) {
		xnf_error("cannot change %s's %s (%s)", peer->link.name, setting, strerror(-err));
		xnf_journal_forget(changes->items[item].journal);
		return -1;
	}
	snprintf(changes->items[item].setting, sizeof(changes->items[item].setting), "%s", setting);
	snprintf(changes->items[item].old_value, sizeof(changes->items[item].old_value), "%s", old);
	changes->count++;
	xnf_info("%s: turned %s at its peer %s%s%s%s until xnf stops, so that %s", f->port.name, what, peer->link.name,
		 peer->enter[0] ? " (" : "", peer->enter, peer->enter[0] ? ")" : "", why);
	return 0;
}

/* The tx-checksum features that are on, joined by commas. */
static void active_tx_checksums(const struct xnf_peer *peer, char *out, size_t len)
{
	struct xnf_features *f = xnf_features_read(peer->sock, peer->link.name);

	out[0] = '\0';
	for (size_t i = 0; f && xnf_tx_checksum_features[i]; i++) {
		if (xnf_feature_active(f, xnf_tx_checksum_features[i]))
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "",
				 xnf_tx_checksum_features[i]);
	}
	xnf_features_free(f);
}

void xnf_peer_recover(struct xnf_port_facts *f, const char *journal_dir)
{
	struct recovery recovery = { .peer = &f->peer };

	if (f->peer.reachable &&
	    xnf_journal_recover(journal_dir, f->peer.cookie, f->peer.link.ifindex, restore_journaled, &recovery))
		xnf_port_reread(f);
}

int xnf_peer_fix(struct xnf_port_facts *f, const char *journal_dir, struct xnf_peer_changes *changes)
{
	static const char *const gro[] = { XNF_FEATURE_GRO, NULL };
	struct xnf_peer *peer = &f->peer;
	char old[XNF_JOURNAL_VALUE_LEN];

	memset(changes, 0, sizeof(*changes));
	if (!peer->reachable || !peer->features_known)
		return 0;
	if (f->xdp_features_known && !(f->xdp_features & XNF_XDP_ACT_NDO_XMIT) && !peer->gro &&
	    change(f, journal_dir, changes, GRO_SETTING, "off", gro, true,
		   "GRO on", "the kernel delivers the XDP frames sent to it"))
		return -1;
	if (peer->tx_csum) {
		active_tx_checksums(peer, old, sizeof(old));
		if (change(f, journal_dir, changes, TX_CSUM_SETTING, old, xnf_tx_checksum_features, false,
			   "checksum offload off", "its stack finishes its own TCP/UDP checksums"))
			return -1;
	}
	if (changes->count)
		xnf_port_reread(f);
	return 0;
}

void xnf_peer_restore(struct xnf_port_facts *f, struct xnf_peer_changes *changes)
{
	struct xnf_peer *peer = &f->peer;

	for (int i = changes->count - 1; i >= 0; i--) {
		int err = put_back(peer->sock, peer->link.name, changes->items[i].setting, changes->items[i].old_value);

		if (err)
			xnf_warn("could not put %s's %s back to '%s': %s", peer->link.name, changes->items[i].setting,
				 changes->items[i].old_value, strerror(-err));
		else
			xnf_journal_forget(changes->items[i].journal);
	}
	changes->count = 0;
}

bool xnf_peer_turned_gro_on(const struct xnf_peer_changes *changes)
{
	for (int i = 0; i < changes->count; i++) {
		if (strcmp(changes->items[i].setting, GRO_SETTING) == 0)
			return true;
	}
	return false;
}
