"""A chain's source comes from its member names alone: each member counts from after the ones before it."""

import pytest

from xnf import chain
from xnf.errors import XnfError


def test_members_count_from_after_the_ones_before():
    source = chain.chain_source("chain:firewall,lb,fwd", ["firewall", "lb", "fwd"])
    assert source.index('#include "nfs/firewall/firewall.c"') < source.index('#include "nfs/lb/lb.c"')
    assert "#define XNF_COUNTER_BASE (0)\n#define XNF_CHAIN_POSITION 0\n#include \"nfs/firewall/firewall.c\"" in source
    assert ("#define XNF_COUNTER_BASE (0 + xnf_ncounters_firewall)\n#define XNF_CHAIN_POSITION 1\n"
            "#include \"nfs/lb/lb.c\"") in source
    assert "#define XNF_COUNTER_BASE (0 + xnf_ncounters_firewall + xnf_ncounters_lb)" in source
    assert "if (XNF_CHAIN_RUNS_HERE(1)) {\n\t\tv = XNF_CHAIN_CALL(lb, pkt);" in source and 'XNF_DEFINE_NF_ENTRY(xnf_chain, "chain:firewall,lb,fwd")' in source


@pytest.mark.parametrize("nf, message", [
    ("chain:firewall", "at least two NFs"),
    ("chain:firewall,nosuch", "unknown NF 'nosuch'"),
    ("chain:lb,lb", "lb appears twice"),
])
def test_bad_chains_are_refused_by_name(nf, message, monkeypatch):
    monkeypatch.setattr(chain.contract, "limit", lambda name: 8)  # the binary's limit, without a build
    with pytest.raises(XnfError, match=message):
        chain.members_of(nf)


@pytest.fixture
def known_modes(monkeypatch):
    """What the binaries' contract says, without a build."""
    monkeypatch.setattr(chain.contract, "limit", lambda name: 8)
    monkeypatch.setattr(chain, "user_space_modes", lambda: ["afxdp", "afxdp-sysc", "afxdp-poll"])


@pytest.mark.parametrize("nf, argv", [
    ("chain:firewall@xdp,lb@afxdp", ["--mode", "afxdp", "--split", "1", "--iface", "x"]),
    ("chain:firewall@xdp,macswap@xdp,lb@afxdp-poll", ["--mode", "afxdp-poll", "--split", "2", "--iface", "x"]),
    ("chain:firewall@xdp,lb@xdp", ["--mode", "xdp", "--iface", "x"]),
    ("chain:firewall@afxdp,lb@afxdp", ["--mode", "afxdp", "--iface", "x"]),
    ("chain:firewall,lb", ["--iface", "x"]),
])
def test_members_places_give_the_mode_and_split(nf, argv, known_modes):
    assert chain.run_arguments(nf, ["--iface", "x"]) == argv


def test_a_split_chain_is_made_of_its_members_without_their_places(known_modes):
    assert chain.members_of("chain:firewall@xdp,lb@afxdp") == ["firewall", "lb"]
