"""The one command line of the generator: where it sends, where it receives, the run's own options."""

from types import SimpleNamespace

from xnf import build
from xnf.lab.generator import Generator, flat_out


def topology():
    links = [SimpleNamespace(gen_if=f"gen{i}", dut_mac=f"02:00:00:00:0{i}:02") for i in range(2)]
    return SimpleNamespace(links=links, gen_ns="ns")


def test_sends_on_a_link_and_receives_on_another(monkeypatch):
    monkeypatch.setattr(build, "tool_binary", lambda name: f"/bin/{name}")
    argv = Generator(topology(), link=1, receive_on=0, options=["--flows", "8"]).argv("--count", "10")
    assert argv == ["/bin/xnf-gen", "--iface", "gen1", "--dst-mac", "02:00:00:00:01:02", "--rx-iface", "gen0",
                    "--flows", "8", "--count", "10"]


def test_the_reference_generator_and_a_flat_out_run(monkeypatch):
    monkeypatch.setattr(build, "tool_binary", lambda name: f"/bin/{name}")
    argv = Generator(topology(), program="xnf-gen-ref").argv(*flat_out(2.5, "0,1"))
    assert argv[0] == "/bin/xnf-gen-ref" and "--rx-iface" not in argv
    assert argv[-6:] == ["--duration", "2.5", "--cores", "0,1", "--call-ms", "1000"]
