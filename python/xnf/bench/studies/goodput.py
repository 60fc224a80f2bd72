"""What real applications get through xnf: TCP goodput (iperf3, one stream and eight) and HTTP requests per second
(wrk against nginx, 16 keep-alive connections) through the router, lb and the NAT, in each data path, beside the
Linux stack's own forwarding between the same namespaces (and, for the NAT, beside nftables masquerade); and the
CPU both cores spent per KiB of the one stream (applications, stacks and the path: exact busy time, /proc/stat),
which the round-to-round spread of one stream's rate does not hide.

Hosts attached as containers are (python/xnf/lab/hosts.py, plain veths: xnf's --peers fix default sets their GRO
and checksum offload, and puts them back): h0 the client, h1 the server (iperf3, nginx with a 1 KiB file), h2 a
second web backend for lb. Every application runs on core 0; an AF_XDP worker on core 1. Subjects:
  linux              the DUT's kernel forwards (ip_forward), no xnf: the yardstick, in every round
  router/<path>      xnf's router between h0 and h1
  lb/<path>          lb with the service's address in front of h1 (iperf3) and of h1 and h2 (HTTP)
  nftables           Linux forwarding with nftables masquerade (conntrack) from h0 out towards h1: the NAT's
                     yardstick, in every round where a nat subject runs
  nat/<path>         xnf's NAT, h0 inside, h1 outside, the DUT's outside address public
where <path> is every way xnf carries frames (python/xnf/lab/paths.py): xdp, afxdp/live, afxdp/xsk (the workers'
transmit paths), afxdp-sysc/live, afxdp-poll/live, hybrid/live, tc. Subjects
run in rounds whose order turns around every round; each metric is also given as the median of its same-round
ratios to linux (and the NAT's to nftables).

    xnf bench run goodput [--rounds 3] [--seconds 2] [--only router/xdp,lb/afxdp/live,nat/tc] [--mtu 9000]

--mtu sets every host's and DUT port's MTU (9000: jumbo frames, which every path carries: docs/writing-an-nf.md,
13); the workers' transmit path is then auto where it would be live frames (one page each).
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from xnf.bench.study import Place, RoundsStudy
from xnf.errors import XnfError
from xnf.lab import apps, container_nf, cpu, paths
from xnf.lab.rounds import median_ratio, medians
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.hosts import HostsTopology

NAME = "goodput"
DESCRIPTION = ("TCP goodput (iperf3, 1 and 8 streams) and HTTP requests/s (wrk, nginx) through router and lb in every "
               "data path, beside Linux's own forwarding")
YARDSTICK = container_nf.LINUX
NAT_YARDSTICK = container_nf.NFTABLES
NFS = tuple(container_nf.RULES)


def _paths(mtu: int | None) -> dict[str, tuple[str, list[str]]]:
    """Every way xnf carries frames (python/xnf/lab/paths.py: the runtime's mode table); at a set MTU (--mtu), the
    workers' transmit path auto where it would be live frames, which are one page."""
    return paths.with_auto_tx() if mtu else paths.options_by_key()


def _all_subjects(mtu: int | None) -> list[str]:
    return [YARDSTICK, NAT_YARDSTICK] + [f"{nf}/{path}" for nf in NFS for path in _paths(mtu)]


METRICS = ("tcp1_gbit_s", "tcp8_gbit_s", "http_rps", "tcp1_cpu_ns_per_kib")
SMALL_FILE = 1024
HTTP_CONNECTIONS = 16


def _carrying(t: HostsTopology, label: str, folder: Path, mtu: int | None):
    """The subject carrying h0's traffic to h1 (python/xnf/lab/container_nf.py)."""
    if label in (YARDSTICK, NAT_YARDSTICK):
        return container_nf.running(t, label, None, [], folder)
    nf, path = label.split("/", 1)
    mode, extra = _paths(mtu)[path]
    return container_nf.running(t, nf, mode, extra, folder)


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    """Three hosts, a web server on the two behind the DUT, kept over every round."""
    with HostsTopology(hosts=3, mtu=args.mtu) as t:
        for b in (t.host(1), t.host(2)):
            apps.WebServer(t, b.ns, b.ip, size=SMALL_FILE, core=GEN_CORE)
        yield t


def trial(label: str, args: argparse.Namespace, place: Place) -> dict:
    t, seconds = place.lab, args.seconds
    h0, h1 = t.host(0), t.host(1)
    with _carrying(t, label, place.folder, args.mtu) as target:
        before = cpu.snapshot()
        tcp1 = apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=seconds, connect_to=target, core=GEN_CORE)
        busy = sum(c["busy"] for c in cpu.split(before, cpu.snapshot()).values())
        tcp8 = apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=seconds, streams=8, connect_to=target, core=GEN_CORE)
        rps = apps.request_rate(h0.ns, f"http://{target}:{apps.HTTP_PORT}/file", seconds=seconds,
                                connections=HTTP_CONNECTIONS, core=GEN_CORE)
        errors = sum(apps.checksum_errors(h.ns) for h in t.host_list)
    return {"subject": label, "tcp1_gbit_s": round(tcp1.gbit_s, 3), "tcp1_retransmits": tcp1.retransmits,
            "tcp1_cpu_ns_per_kib": round(busy * 1e9 / (tcp1.received_bytes / 1024), 1) if tcp1.received_bytes
            else None,
            "tcp8_gbit_s": round(tcp8.gbit_s, 3), "tcp8_retransmits": tcp8.retransmits, "http_rps": round(rps),
            "checksum_errors": errors}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for label in dict.fromkeys(s["subject"] for s in samples):
        mine = [s for s in samples if s["subject"] == label]
        row = {"subject": label, "rounds": len(mine)}
        for metric in METRICS:
            row.update(medians(mine, (metric,)))
            row[f"{metric}_ratio_to_linux"] = median_ratio(samples, mine, metric, YARDSTICK)
            if label.startswith("nat/"):
                row[f"{metric}_ratio_to_nftables"] = median_ratio(samples, mine, metric, NAT_YARDSTICK)
        row["retransmits"] = sum(s["tcp1_retransmits"] + s["tcp8_retransmits"] for s in mine)
        row["checksum_errors"] = sum(s["checksum_errors"] for s in mine)
        rows.append(row)
    return rows


def _full_name(subject: str, mtu: int | None) -> str:
    """nf/mode names the mode's default transmit path where its workers send: lb/afxdp is lb/afxdp/live."""
    nf, _, path = subject.partition("/")
    if not path or path in _paths(mtu):
        return subject
    try:
        return f"{nf}/{paths.find(path).key}"
    except XnfError:
        return subject


def _subjects(only: str | None, mtu: int | None) -> list[str]:
    every = _all_subjects(mtu)
    if not only:
        return every
    wanted = [_full_name(s.strip(), mtu) for s in only.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in every]
    if unknown:
        raise XnfError(f"--only {','.join(unknown)}: no such subject; choose among {', '.join(every)}")
    nat = [NAT_YARDSTICK] if any(s.startswith("nat/") for s in wanted) else []
    return [YARDSTICK] + nat + [s for s in wanted if s not in (YARDSTICK, NAT_YARDSTICK)]


STUDY = RoundsStudy(
    NAME, "goodput", subjects=lambda args: _subjects(args.only, args.mtu), trial=trial, summarise=summarise,
    lab=_lab, rounds=3, seconds=2, seconds_type=int,
    options=lambda parser: (
        parser.add_argument("--only", metavar="S,S", help="these subjects (and the yardstick): router/xdp, "
                            "lb/afxdp ..."),
        parser.add_argument("--mtu", type=int, metavar="BYTES", help="every host's and DUT port's MTU (9000: jumbo "
                            "frames); the workers then send with --tx-path auto")),
    line=lambda s: f"{s['subject']:17s} TCP {s['tcp1_gbit_s']:6.2f} / {s['tcp8_gbit_s']:6.2f} Gbit/s (1/8 streams), "
                   f"{s['http_rps']:7.0f} req/s",
    report=lambda row: f"{row['subject']:17s} " + ", ".join(
        f"{m} {row[m]} ({row[m + '_ratio_to_linux']} of linux"
        + (f", {row[m + '_ratio_to_nftables']} of nftables)" if m + "_ratio_to_nftables" in row else ")")
        for m in METRICS),
    fields=lambda args: {"application_core": GEN_CORE, "dut_core": DUT_CORE, "http_connections": HTTP_CONNECTIONS,
                         "mtu": args.mtu or 1500,
                         "http_file_bytes": SMALL_FILE, "yardstick": YARDSTICK,
                         "paths": {k: {"mode": v[0], "options": v[1]} for k, v in _paths(args.mtu).items()}})
add_arguments, run = STUDY.add_arguments, STUDY.run
