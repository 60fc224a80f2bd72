"""veth's own per-queue XDP counters (ethtool -S), the same for any program attached."""

from __future__ import annotations

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
