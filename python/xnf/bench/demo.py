"""The main job: the NFs on an emulated edge server, with real traffic.

1. Behaviour: frames sent through a veth pair into each NF, in XDP and in AF_XDP mode; what came back is
   checked, a firewall rule is added while it runs, the load balancer spreads flows over its backends, and a
   chain (firewall then lb) does both in one program.
2. Rates: xnf-gen floods each NF for a few seconds in both modes, side by side (in AF_XDP mode with both
   transmit paths: live frames and the socket's own ring); completed packets per second from veth's
   counters, and the CPU split of each core, so it is plain which core did the work and which path wins.
3. Which path wins: `xnf advise` answers for a firewall under attack and a CPU-heavy checksum from the machine's
   profile (a quick one, fitted and installed, if none is), and measures its pick beside the next best: a pick
   that the measurement refutes fails the demo.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.table import Table

from xnf import build, control, kernel, output
from xnf.lab import paths, veth_stats
from xnf.lab.cores import GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.frames import udp_frame
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Link, Topology
from xnf.model import advise_command

console = output.console()


def _exchange(t: Topology, frames: list[bytes]) -> list[bytes]:
    with PacketPort(t.gen_ns, t.links[0].gen_if) as port:
        port.send(frames)
        return port.receive()


def behaviour() -> bool:
    console.rule("[bold]1. Behaviour: real frames through veth, the same NFs in XDP and in AF_XDP mode")
    ok = True
    with Topology("pair") as t, tempfile.TemporaryDirectory() as tmp:
        link = t.links[0]
        frames = [udp_frame(link, 1000 + i, 53) for i in range(50)]
        rules = Path(tmp) / "acl.txt"
        rules.write_text("".join(f"drop udp {link.gen_ip} {1000 + i} {link.dut_ip} 53\n" for i in range(0, 50, 2)))
        for mode in paths.modes(paths.kernel_and_user):
            console.print(f"  [bold]{mode}[/bold]")
            nf = NfInstance.start(t, "macswap", mode, t.dut_ifaces)
            back = _exchange(t, frames)
            swapped = all(f[:6] == bytes.fromhex(link.gen_mac.replace(":", "")) for f in back)
            ok &= _report("macswap", f"sent 50, got {len(back)} back with MACs swapped: {swapped}",
                          len(back) == 50 and swapped)
            nf.stop()

            nf = NfInstance.start(t, "drop", mode, t.dut_ifaces)
            back = _exchange(t, frames)
            dropped = nf.stats()["drop"]["packets"]
            ok &= _report("drop", f"sent 50, got {len(back)} back, counted {dropped} drops",
                          not back and dropped == 50)
            nf.stop()

            nf = NfInstance.start(t, "firewall", mode, t.dut_ifaces, rules=str(rules))
            back = _exchange(t, frames)
            ok &= _report("firewall", f"25 of 50 flows in the ACL: {len(back)} came back", len(back) == 25)
            nf.request(f"rules add drop udp {link.gen_ip} 1001 {link.dut_ip} 53")
            back = _exchange(t, frames)
            ok &= _report("firewall", f"rule added while running: {len(back)} came back", len(back) == 24)
            nf.stop()

            ok &= _balancing(t, mode, frames, Path(tmp), rules)
    return ok


BACKENDS = ("198.19.0.11", "198.19.0.12", "198.19.0.13")


def _lb_rules(link: Link) -> list[str]:
    lines = [f"service udp {link.dut_ip} 53"]
    lines += [f"backend udp {link.dut_ip} 53 slot {i} {addr} 53 mac {link.gen_mac} port 0"
              for i, addr in enumerate(BACKENDS)]
    return lines


def _spread(back: list[bytes]) -> dict[str, int]:
    """Frames per destination address (IPv4 without VLAN tags: bytes 30-33)."""
    counts: dict[str, int] = {}
    for frame in back:
        addr = ".".join(str(b) for b in frame[30:34])
        counts[addr] = counts.get(addr, 0) + 1
    return counts


def _balancing(t: Topology, mode: str, frames: list[bytes], tmp: Path, acl: Path) -> bool:
    link = t.links[0]
    ok = True
    lb_rules = tmp / "lb.txt"
    lb_rules.write_text("\n".join(_lb_rules(link)) + "\n")
    nf = NfInstance.start(t, "lb", mode, t.dut_ifaces, rules=str(lb_rules))
    spread = _spread(_exchange(t, frames))
    sessions = control.request_json(nf.name, "stats")["counters"]["new_session"]
    shares = "/".join(str(spread.get(addr, 0)) for addr in BACKENDS)
    ok &= _report("lb", f"50 flows, {sessions} sessions, {shares} on 3 backends",
                  sum(spread.values()) == 50 and set(spread) <= set(BACKENDS) and len(spread) > 1 and sessions == 50)
    nf.stop()

    chain_rules = tmp / "chain.txt"
    chain_rules.write_text("".join(f"firewall {line}" for line in acl.read_text().splitlines(keepends=True))
                           + "".join(f"lb {line}\n" for line in _lb_rules(link)))
    nf = NfInstance.start(t, "chain:firewall,lb", mode, t.dut_ifaces, rules=str(chain_rules))
    spread = _spread(_exchange(t, frames))
    ok &= _report("chain", f"firewall,lb: {sum(spread.values())} of 50 through, all to backends: "
                           f"{set(spread) <= set(BACKENDS)}",
                  sum(spread.values()) == 25 and set(spread) <= set(BACKENDS))
    nf.stop()
    return ok


def _report(nf: str, text: str, passed: bool) -> bool:
    mark = "[green]ok[/green]" if passed else "[red]FAILED[/red]"
    console.print(f"  {mark}  {nf:9s} {text}")
    return passed


def _measure(t: Topology, nf: str, mode: str, tx_path: str | None, seconds: float, rules: str | None = None) -> dict:
    extra = paths.worker_options(mode)
    extra += ["--tx-path", tx_path] if tx_path else []
    instance = NfInstance.start(t, nf, mode, t.dut_ifaces, rules=rules, extra=extra)
    try:
        def completed() -> int:
            if nf == "drop":  # counted by the NF: in AF_XDP mode veth only sees redirects
                return instance.stats()["drop"]["packets"]
            return veth_stats.read(t.gen_ns, "gen0")["rx_xdp_drops"]  # frames back at the generator side

        run = flood(t, seconds, GEN_CORE, [], completed)
    finally:
        instance.stop()
    return {"nf": nf, "mode": mode, "tx_path": tx_path or "", "sent": run.sent, "mpps": run.mpps(run.returned),
            "cpu": run.cpu, "sender": run.sender}


def rate_runs() -> list[tuple[str, str, str | None]]:
    """Per NF: XDP, then the first user-space mode on each transmit path this kernel runs (drop sends nothing, so it
    has one AF_XDP line)."""
    kernel_path = next(iter(paths.representative()))
    user_mode = next(p.mode for p in paths.representative().values() if p.described["datapath"] == "user")
    user = [p for p in paths.runnable().values() if p.mode == user_mode]
    return [("drop", kernel_path, None), ("drop", user[0].mode, None)] + [
        (nf, mode, tx) for nf in ("macswap", "firewall") for mode, tx in [(kernel_path, None)] +
        [(p.mode, p.tx_path) for p in user]]


def _said_of_the_sender(sender: str) -> str:
    """What the rates mean, given how xnf-gen sent."""
    if sender == "live":
        return ""
    return (f" xnf-gen sent with its {sender} sender: {kernel.refusal('live_frames')}. Where the generator, not "
            "the NF, is the limit, the rates are the generator's; each frame reaches the DUT as an skb, which veth "
            "copies into a page before XDP sees it (docs/results.md, 'Sending without live frames').")


def rates(seconds: float) -> None:
    console.rule("[bold]2. Rates: 64-byte frames, generator pinned to core 0, AF_XDP worker on core 1")
    with Topology("pair", gen_xdp="drop") as t, tempfile.TemporaryDirectory() as tmp:
        link = t.links[0]
        rules = Path(tmp) / "acl.txt"
        rules.write_text("".join(f"drop udp 198.18.1.{i % 250} {i} {link.dut_ip} 53\n" for i in range(1000)))
        runs = [_measure(t, nf, mode, path, seconds, rules=str(rules) if nf == "firewall" else None)
                for nf, mode, path in rate_runs()]
    table = Table(title="The same NFs in the kernel (xdp) and in user space (afxdp), on veth; the firewall has 1,000 rules")
    for column in ("NF", "mode", "transmit", "Mpps", "core0 sys s", "core0 softirq s", "core1 busy", "of xdp"):
        table.add_column(column, justify="right")
    xdp_rate = {run["nf"]: run["mpps"] for run in runs if run["mode"] == "xdp"}
    for run in runs:
        c0, c1 = run["cpu"][0], run["cpu"].get(1, {"busy_share": 0.0})
        share = f"{run['mpps'] / xdp_rate[run['nf']]:.0%}" if run["mode"] != "xdp" and xdp_rate.get(run["nf"]) else ""
        table.add_row(run["nf"], run["mode"], run["tx_path"], f"{run['mpps']:.2f}", f"{c0['system']:.2f}",
                      f"{c0['softirq']:.2f}", f"{c1['busy_share']:.0%}", share)
    console.print(table)
    console.print("  On veth the receiver's XDP (and the copy into AF_XDP memory) runs on the sender's core: core 0's "
                  "system time is mostly the generator, its softirq the NF's kernel part. An afxdp worker spins, so "
                  "core 1 is busy whatever the load. The socket's own ring (xsk) sends through an skb per frame in "
                  "copy mode; the live path sends the way XDP does (docs/afxdp.md, docs/results.md)."
                  + _said_of_the_sender(runs[0]["sender"]))


def _xnf(*args: str) -> subprocess.CompletedProcess:
    # The answer's table is read here, not on a terminal: wide enough that its columns stay whole.
    return subprocess.run([sys.executable, "-m", "xnf", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "120"})


def advice() -> bool:
    """The product's question, answered: the machine's profile (a quick fit of a few paths when none is installed,
    which `xnf advise` makes and installs itself), then two NFs that belong in different places, each pick measured
    beside the next best. A pick that its measurement refutes is a failed check."""
    console.rule("[bold]3. Which path wins? The cost model's answer, then measured")
    with tempfile.TemporaryDirectory() as tmp:
        acl, repeat = Path(tmp) / "acl.txt", Path(tmp) / "ck.txt"
        acl.write_text("".join(f"drop udp 203.0.113.{i} 9 198.18.0.2 9\n" for i in range(16)))
        repeat.write_text("repeat 32\n")
        ok = True
        for nf, options, rules in (("firewall", ["--rules", str(acl), "--mix", DEMO_ATTACK], str(acl)),
                                   ("checksum", ["--rules", str(repeat)], str(repeat))):
            asked = _xnf("advise", nf, *options, "--rounds", "1", "--verify", "2", "--json")
            if asked.returncode != 0:
                ok &= _report("advise", f"{nf}: {asked.stderr.strip()[-400:]}", False)
                continue
            answer = json.loads(asked.stdout)
            advise_command.print_text(answer, rules)
            verified = answer["verification"]
            fitted_unsteady = not answer["profile"].get("host", {}).get("steady", True)
            # A pick that does not hold fails the check, unless the host moved more, while it was measured, than
            # the gap between the paths, or the quick profile could only be fitted on an unsteady host: then no
            # model can tell them apart here, the advice says so, and recommends the measured fastest.
            ok &= _report("advise", _verdict_line(nf, verified, fitted_unsteady),
                          verified["pick_holds"] or verified["host_too_unsteady"] or fitted_unsteady)
    return ok


def _verdict_line(nf: str, verified: dict, fitted_unsteady: bool) -> str:
    unsteady = ""
    if not verified["pick_holds"] and verified["host_too_unsteady"]:
        unsteady = (f"; the host moved {verified['host_spread']:.0%} while measured, more than the paths' gap of "
                    f"{verified['gap_to_second']:.0%}: too unsteady to tell them apart, {verified['fastest']} is "
                    "recommended as measured")
    elif not verified["pick_holds"] and fitted_unsteady:
        unsteady = (f"; the quick profile was fitted on an unsteady host (marked so, its confidence low): "
                    f"{verified['recommended']} is recommended as measured")
    return (f"{nf}: the pick measured at {verified['pick_over_fastest']:.0%} of the fastest of the "
            f"{verified['measured']} measured ({verified['fastest']}){unsteady}")


# A firewall's traffic under attack: three quarters legitimate, a quarter from the 16 sources its rules drop.
DEMO_ATTACK = "legit:share=0.75,flows=64,vary=sport; attack:saddr=203.0.113.0/28,share=0.25"


def run(seconds: float = 2.0) -> int:
    build.ensure_built()
    ok = behaviour()
    rates(seconds)
    ok &= advice()
    leftover = [name for name in control.instances() if name.startswith("xnf-")]
    console.rule()
    console.print("[green]demo finished: every check passed[/green]" if ok and not leftover
                  else "[red]demo finished with failures[/red]")
    return 0 if ok else 1
