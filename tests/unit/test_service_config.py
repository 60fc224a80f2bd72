"""The service's configuration file (python/xnf/service/config.py): a valid file gives its instances exactly; every
malformed field is refused with the file, the line and what to write; any text is read or refused in one message."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given, settings, strategies as st

from xnf.errors import XnfError
from xnf.service import config

GOOD = '''# two instances
[instance.edge-fw]
nf = "firewall"
mode = "xdp"
ifaces = ["eth1"]
rules = "fw.rules"

[instance.edge-nat]
nf = "nat"
mode = "tc"
ifaces = ["eth2", "eth3"]
options = ["--map-size", "nat_sessions=65536"]
rules_text = """
inside port 0
"""
'''


@pytest.fixture(autouse=True)
def nfs_here(monkeypatch):
    monkeypatch.setattr("xnf.build.available_nfs", lambda: ["firewall", "nat", "router"])


def write(tmp_path, text: str, rules: str | None = "drop udp 10.0.0.1 9 10.0.0.2 9\n"):
    if rules is not None:
        (tmp_path / "fw.rules").write_text(rules)
    path = tmp_path / "xnf.toml"
    path.write_text(text)
    return path


def test_a_valid_file_gives_each_instance_as_written(tmp_path):
    got = config.load(write(tmp_path, GOOD))
    fw, nat = got.instances["edge-fw"], got.instances["edge-nat"]
    assert (fw.nf, fw.mode, fw.ifaces, fw.rules) == ("firewall", "xdp", ("eth1",), "drop udp 10.0.0.1 9 10.0.0.2 9\n")
    assert nat.rules == "inside port 0\n" and nat.options == ("--map-size", "nat_sessions=65536")
    assert nat.run_options(None) == ["--mode", "tc", "--name", "edge-nat", "--iface", "eth2", "--iface", "eth3",
                                     "--map-size", "nat_sessions=65536"]


@pytest.mark.parametrize("change, line, says", [
    (('mode = "xdp"', 'mode = "xpd"'), 4, "unknown mode 'xpd'"),
    (('nf = "firewall"', 'nf = "firewal"'), 3, "no NF 'firewal'"),
    (('ifaces = ["eth1"]', 'ifaces = "eth1"'), 5, "'ifaces' must be a list of strings"),
    (('ifaces = ["eth1"]', 'ifaces = []'), 5, "at least one interface"),
    (('ifaces = ["eth1"]', 'ifaces = ["eth1", "eth1"]'), 5, "named twice"),
    (('ifaces = ["eth1"]', 'ifaces = ["a-name-far-too-long"]'), 5, "not an interface name"),
    (('ifaces = ["eth2", "eth3"]', 'ifaces = ["eth1", "eth3"]'), 11, "eth1 is given to both edge-fw and edge-nat"),
    (('rules = "fw.rules"', 'rule = "fw.rules"'), 6, "unknown key 'rule'"),
    (('rules = "fw.rules"', 'rules = "missing.rules"'), 6, "cannot read the rules"),
    (('options = ["--map-size", "nat_sessions=65536"]', 'options = ["--mode", "xdp"]'), 12,
     "--mode is given by mode"),
    (('options = ["--map-size", "nat_sessions=65536"]', 'options = ["--iface=eth9"]'), 12, "given by ifaces"),
    (('options = ["--map-size", "nat_sessions=65536"]', 'options = [1]'), 12, "each a string"),
    (('[instance.edge-fw]', '[instance.".hidden"]'), 2, "instance name '.hidden'"),
    (('[instance.edge-fw]', '[instance."a b"]'), 2, "instance name 'a b'"),
    (('mode = "xdp"', 'mode = "xdp"\nrules_text = "x"'), 5, "not both"),
    (('nf = "firewall"\n', ''), 2, "needs nf"),
    (('# two instances', 'pidfile = "/run/x"'), 1, "unknown key 'pidfile'"),
    (('mode = "xdp"', 'mode = "xdp"\npin = "relative/dir"'), 5, "absolute folder"),
])
def test_each_malformed_field_is_refused_at_its_line(tmp_path, change, line, says):
    path = write(tmp_path, GOOD.replace(*change, 1))
    with pytest.raises(XnfError) as err:
        config.load(path)
    assert says in str(err.value) and f"{path}:{line}:" in str(err.value), str(err.value)


def test_toml_that_does_not_parse_is_refused_with_its_line(tmp_path):
    with pytest.raises(XnfError, match=r"not TOML: .*line 3"):
        config.load(write(tmp_path, '[instance.a]\nnf = "firewall"\nmode = xdp\n'))


def test_a_long_name_is_refused_with_the_runtimes_limit(tmp_path):
    name = "n" * (config.contract.runtime()["limits"]["name"] + 1)
    with pytest.raises(XnfError, match="use up to 64"):
        config.load(write(tmp_path, GOOD.replace("edge-fw", name, 1)))


def test_the_rules_text_change_alone_is_a_change_in_place(tmp_path):
    before = config.load(write(tmp_path, GOOD)).instances["edge-nat"]
    after = config.load(write(tmp_path, GOOD.replace("inside port 0", "inside port 1"))).instances["edge-nat"]
    assert after != before and after.same_but_rules(before)
    moved = config.load(write(tmp_path, GOOD.replace('mode = "tc"', 'mode = "xdp"'))).instances["edge-nat"]
    assert not moved.same_but_rules(before)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_is_read_or_refused_in_one_message(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "xnf.toml"
    path.write_text(text)
    try:
        got = config.load(path)
    except XnfError as err:
        assert str(path) in str(err)
        return
    assert all(spec.ifaces and spec.nf and spec.mode for spec in got.instances.values())


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.text(max_size=20), st.integers(), st.lists(st.text(max_size=8), max_size=3),
                       st.booleans()), key=st.sampled_from(list(config.KEYS)))
@example(value="\x00", key="rules")  # once found by CI: a NUL in a path made open() raise ValueError
def test_any_value_of_any_key_is_taken_or_refused_at_its_line(tmp_path_factory, value, key):
    import json

    folder = tmp_path_factory.mktemp("value")
    (folder / "fw.rules").write_text("")
    table = {"nf": "firewall", "mode": "xdp", "ifaces": ["eth1"], key: value}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    path = folder / "xnf.toml"
    path.write_text(f"[instance.a]\n{body}\n")
    try:
        got = config.load(path)
    except XnfError as err:
        assert f"{path}:" in str(err)
        return
    assert got.instances["a"].nf == "firewall"


def test_a_fifo_or_a_device_as_the_file_is_refused_not_waited_on(tmp_path):
    """A FIFO no one writes to once hung `xnf apply --check`; the daemon reads its file again at every reload, so
    only a regular file will do, and the same for a rules file it names."""
    fifo = tmp_path / "xnf.toml"
    os.mkfifo(fifo)
    with pytest.raises(XnfError, match="is not a regular file"):
        config.load(fifo)
    (tmp_path / "other").mkdir()
    path = write(tmp_path / "other", GOOD.replace('rules = "fw.rules"', 'rules = "/dev/zero"'), rules=None)
    with pytest.raises(XnfError, match="/dev/zero is not a regular file"):
        config.load(path)
