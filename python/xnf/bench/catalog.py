"""The benchmarks xnf ships. `xnf bench list` shows them; `xnf bench run NAME` runs one.

Two kinds share one home, one order of trials (bench/rounds.py), one generator wrapper and one results
writer: grids (a declared NFs x modes x parameters sweep, measured by grid.py) and studies (python/xnf/bench/
studies/: a comparison with its own subjects and yardsticks, and its own options)."""

from __future__ import annotations

from types import ModuleType

from xnf.bench.grid import Benchmark
from xnf.bench.studies import (acl_rules, advisor_check, af_packet, afxdp_modes, capture_cost, conntrack_rates,
                               continuity, core_pair, dispatch_cost, frame_prefetch, generator_reference, goodput,
                               live_placement, live_tx, local_app_load, mixed_traffic, model_check, model_fit,
                               nat_rates, new_sessions, nf_cost, nodes_scaling, senders, soak, stack_forwarding,
                               upf_paths, xdp_overhead)
from xnf.errors import XnfError
from xnf.lab import paths

def _cost_model(name: str, nf: str, what: str, param: str, values: list[int]) -> Benchmark:
    """One NF-side parameter swept, XDP beside afxdp on both transmit paths, RFC 2544 at every point, 5
    repetitions (what a published table needs) with the hand-written XDP yardstick in each."""
    return Benchmark(name=name, description=f"{what}, XDP against AF_XDP (live-frames and xsk-ring transmit): "
                     "RFC 2544 throughput", nfs=[nf], modes=paths.Modes(paths.kernel_and_user), tx_paths=["live", "xsk"],
                     measure="throughput", seconds=0.5, repetitions=5, nf_params={param: values},
                     yardstick=True)


BENCHMARKS = [
    Benchmark(
        name="generator",
        description="xnf-gen alone: unpaced 64-byte frames into an XDP_DROP peer (the drop NF), one core "
                    "and one queue, then two cores and two queues; probes stamped in every frame or 1 in 64",
        nfs=["drop"], modes=["xdp"], measure="max-rate", seconds=3.0, repetitions=3,
        params={"gen_cores": [(0,), (0, 1)], "stamp_every": [1, 64]},
    ),
    Benchmark(
        name="generator-napi",
        description="xnf-gen alone on core 0, the XDP_DROP peer (the drop NF) in threaded NAPI on core 1 "
                    "instead of in softirq on the generator's core: what the generator's core does by itself; "
                    "probes stamped in every frame or 1 in 64, 64 or 256 frames per kernel round",
        nfs=["drop"], modes=["xdp"], measure="max-rate", seconds=3.0, repetitions=3,
        params={"stamp_every": [1, 64], "batch": [64, 256]}, dut_receive_core=1,
    ),
    Benchmark(
        name="xdp-throughput",
        description="drop and macswap in XDP mode: RFC 2544 throughput (loss < 0.1 %), latency at 10/50/90 % "
                    "of it, cost per packet",
        nfs=["drop", "macswap"], modes=["xdp"], measure="throughput", seconds=1.0, repetitions=3,
    ),
    Benchmark(
        name="modes-throughput",
        description="drop and macswap in every mode (generic XDP aside): RFC 2544 throughput and latency",
        nfs=["drop", "macswap"], modes=paths.Modes(paths.every_mode),
        measure="throughput", seconds=1.0, repetitions=2,
    ),
    Benchmark(
        name="frame-size",
        description="macswap in XDP and AF_XDP mode over frame sizes: throughput per size",
        nfs=["macswap"], modes=paths.Modes(paths.kernel_and_user), measure="throughput", seconds=1.0, repetitions=2,
        params={"size": [64, 256, 512, 1024, 1518]},
    ),
    Benchmark(
        name="three-sizes",
        description="macswap and router at 64, 1,518 and 9,000-byte frames in xdp, afxdp, hybrid and tc: RFC 2544 "
                    "throughput in Mpps and Gbit/s (9,000-byte frames over veths of MTU 8,982, xnf-gen's packet "
                    "socket sending them); the hand-written XDP yardstick every repetition",
        nfs=["macswap", "router"], modes=paths.Modes(paths.representative), measure="throughput", seconds=1.0,
        repetitions=3, params={"size": [64, 1518, 9000]}, yardstick=True,
        rules={"router": "route 198.18.0.0/16 via 02:00:00:00:00:01 port 0\n"},
    ),
    # The cost model: XDP beside the busy-loop AF_XDP mode on each transmit path, one NF-side parameter swept
    # (docs/cost-model.md).
    # On veth the XDP NF shares core 0 with the generator; --dut-receive-core 1 gives it core 1 instead.
    _cost_model("firewall-acl", "firewall", "firewall with 10 to 1,000,000 exact-match ACL entries (up to 65,536 "
                "of them hit)", "acl_entries", [10, 1000, 100000, 1000000]),
    _cost_model("lb-sessions", "lb", "lb with 10 to 1,000,000 established sessions (up to 65,536 of them hit)",
                "lb_sessions", [10, 1000, 100000, 1000000]),
    _cost_model("memload", "memload", "memload, one random access per packet into 4 KiB to 1 GiB",
                "memload_bytes", [4 << 10, 256 << 10, 16 << 20, 256 << 20, 1 << 30]),
    _cost_model("checksum", "checksum", "checksum, 0 to 64 L4 checksum computations per packet",
                "checksum_repeat", [0, 1, 4, 16, 64]),
    # The container-networking study's effects and the latency-against-batch finding (docs/reproduce.md).
    Benchmark(
        name="batch-latency",
        description="macswap in user space (afxdp, live transmit) with the workers' batch from 8 to 256: "
                    "throughput, and latency at 10/50/90 % of it",
        nfs=["macswap"], modes=["afxdp"], measure="throughput", seconds=0.5, repetitions=5,
        nf_params={"nf_batch": [8, 16, 32, 64, 128, 256]},
    ),
    Benchmark(
        name="ring-size",
        description="macswap in user space (afxdp, live transmit) with rings of 256 to 4,096 slots: throughput "
                    "and latency",
        nfs=["macswap"], modes=["afxdp"], measure="throughput", seconds=0.5, repetitions=5,
        nf_params={"ring_size": [256, 512, 1024, 2048, 4096]},
    ),
    Benchmark(
        name="queues",
        description="macswap in XDP and in user space with one queue (one generator thread, one worker) and "
                    "with two (two of each, over both cores)",
        nfs=["macswap"], modes=paths.Modes(paths.kernel_and_user), measure="throughput", seconds=0.5, repetitions=5,
        params={"gen_cores": [(0,), (0, 1)]},
    ),
    Benchmark(
        name="flow-count",
        description="lb with 1 to 65,536 flows, each with its session: throughput in XDP and in user space",
        nfs=["lb"], modes=paths.Modes(paths.kernel_and_user), measure="throughput", seconds=0.5, repetitions=5,
        nf_params={"lb_sessions": [1, 64, 4096, 65536]},
    ),
    Benchmark(
        name="smoke",
        description="a seconds-long run of the whole chain (search, latency, results, report): for tests",
        nfs=["macswap"], modes=["xdp"], measure="throughput", seconds=0.3, repetitions=2,
        params={"size": [64, 128]},
    ),
]


# Each study module has NAME, DESCRIPTION, add_arguments(parser) and run(args, out_dir) -> results path.
STUDIES: list[ModuleType] = [xdp_overhead, afxdp_modes, generator_reference, senders, live_tx, mixed_traffic,
                             local_app_load, dispatch_cost, capture_cost, soak, nf_cost, model_fit, model_check,
                             advisor_check,
                             af_packet, stack_forwarding, nodes_scaling, core_pair, live_placement, frame_prefetch,
                             goodput, acl_rules, nat_rates, new_sessions, upf_paths, continuity, conntrack_rates]


def names() -> list[str]:
    return [b.name for b in BENCHMARKS] + [s.NAME for s in STUDIES]


def find(name: str) -> Benchmark | ModuleType:
    """A grid (Benchmark) or a study module."""
    for bench in BENCHMARKS:
        if bench.name == name:
            return bench
    for study in STUDIES:
        if study.NAME == name:
            return study
    raise XnfError(f"unknown benchmark '{name}': choose one of {', '.join(names())}")
