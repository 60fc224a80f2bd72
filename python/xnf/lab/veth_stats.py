"""veth's own counters: per-queue XDP ones (ethtool -S), the same for any program attached, and what it refused to
send."""

from __future__ import annotations

import json

from xnf.lab import netns


def read(ns: str, iface: str) -> dict[str, int]:
    """Counters summed over queues, keyed without the queue prefix (xdp_packets, xdp_drops, xdp_xmit...)."""
    out = netns.run(ns, ["ethtool", "-S", iface]).stdout
    totals: dict[str, int] = {}
    for line in out.splitlines()[1:]:
        key, _, value = line.strip().partition(": ")
        if not value.isdigit() or not key.startswith(("rx_queue_", "tx_queue_")):
            continue
        direction, _, rest = key.partition("_queue_")
        name = f"{direction}_{rest.split('_', 1)[1]}"
        totals[name] = totals.get(name, 0) + int(value)
    return totals


def refused_to_send(ns: str, iface: str) -> int:
    """Frames the interface refused when handed them (its peer's ring full): frames of XDP (live frames,
    xdp_xmit_errors) and skbs (xnf-gen's tc sender, the link's tx dropped). Each sender raises only its own."""
    link = json.loads(netns.run(ns, ["ip", "-s", "-j", "link", "show", "dev", iface]).stdout)[0]
    return read(ns, iface).get("tx_xdp_xmit_errors", 0) + link["stats64"]["tx"]["dropped"]
