"""The numbers the lab publishes come from three counters that must agree exactly."""


import pytest

from xnf.build import BIN_DIR
from xnf.lab import cpu, veth_stats
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology


@pytest.mark.parametrize("cores", ["0", "1"])
def test_generator_veth_and_nf_counts_agree(cores):
    with Topology("pair", gen_xdp="drop") as t:
        nf = NfInstance.start(t, "drop", "xdp", t.dut_ifaces)
        before = veth_stats.read(t.dut_ns, "dut0")
        cpu_before = cpu.snapshot()
        sent = Generator(t).run("--count", "200000", "--cores", cores, "--call-ms", "100").summary["sent"]
        usage = cpu.split(cpu_before, cpu.snapshot())
        after = veth_stats.read(t.dut_ns, "dut0")
        assert sent == 200000
        assert after["rx_xdp_drops"] - before["rx_xdp_drops"] == sent
        assert after["rx_xdp_packets"] - before["rx_xdp_packets"] == sent
        assert nf.stats()["drop"]["packets"] == sent
        assert nf.stats()["drop"]["bytes"] == sent * 60  # 64-byte frames on the wire, FCS not in memory
        busy = {core: share["busy_share"] for core, share in usage.items()}
        assert set(busy) == {0, 1}


def test_generator_refuses_bad_input(pair):
    gen = str(BIN_DIR / "xnf-gen")
    cases = [
        (["--iface", "nope", "--dst-mac", "02:00:00:00:00:02"], "does not exist"),
        (["--iface", "gen0", "--dst-mac", "zz"], "--dst-mac takes a MAC address like 02:00:00:00:00:02, not 'zz'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--size", "20"],
         "frame size 20: IPv4/UDP frames with xnf's probe take 64 to 9216 bytes"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--size", "9217"],
         "--size takes a whole number from 1 to 9216, not '9217'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--size", "IMIX"],
         "--size takes a frame size from 1 to 9216 bytes, or imix, not 'IMIX'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--size", "4000", "--sender", "live"],
         "frames of 4000 bytes are longer than a live frame"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--ipv6", "--size", "imix"],
         "class all@64 (IPv6/UDP) takes at least 82 bytes"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--size", "imix", "--class", "a:share=0.5,size=100",
          "--class", "b:share=0.5"], "--class a: size= and --size imix both give its size"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--check-payload", "--class", "a:share=0.5",
          "--class", "b:share=0.5,proto=tcp"], "needs classes whose headers are as long"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--ipv6", "--proto", "tcp", "--size", "64"],
         "IPv6/TCP frames with xnf's probe take 94"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--flows", "0"],
         "--flows takes a whole number from 1 to 65536, not '0'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--vary", "ttl"], "unknown field 'ttl'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--proto", "sctp"], "--proto takes udp, tcp or tcp-syn, not 'sctp'"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--src-ip", "2001:2::1", "--dst-ip", "198.18.0.2"],
         "both be IPv4 or both IPv6"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--cores", "0,0"], "core 0 is given twice"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--rx-iface", "nope"], "'nope' does not exist"),
        (["--iface", "gen0", "--dst-mac", "02:00:00:00:00:02", "--cores", "7"], "'7' is not one of this machine's cores"),
    ]
    for args, message in cases:
        result = pair.run(pair.gen_ns, [gen] + args, check=False)
        assert result.returncode != 0
        assert message in result.stderr and result.stderr.startswith("xnf: error:")
