"""A chain's source comes from its member names alone: each member counts from after the ones before it."""

import pytest

from xnf import chain
from xnf.errors import XnfError


def test_members_count_from_after_the_ones_before():
    source = chain.chain_source("chain:firewall,lb,fwd", ["firewall", "lb", "fwd"])
    assert source.index('#include "nfs/firewall/firewall.c"') < source.index('#include "nfs/lb/lb.c"')
    assert "#define XNF_COUNTER_BASE (0)\n#include \"nfs/firewall/firewall.c\"" in source
    assert "#define XNF_COUNTER_BASE (0 + xnf_ncounters_firewall)\n#include \"nfs/lb/lb.c\"" in source
    assert "#define XNF_COUNTER_BASE (0 + xnf_ncounters_firewall + xnf_ncounters_lb)" in source
    assert "v = XNF_CHAIN_CALL(lb, pkt);" in source and 'XNF_DEFINE_NF_ENTRY(xnf_chain, "chain:firewall,lb,fwd")' in source


@pytest.mark.parametrize("nf, message", [
    ("chain:firewall", "at least two NFs"),
    ("chain:firewall,nosuch", "unknown NF 'nosuch'"),
    ("chain:lb,lb", "lb appears twice"),
])
def test_bad_chains_are_refused_by_name(nf, message, monkeypatch):
    monkeypatch.setattr(chain.contract, "limit", lambda name: 8)  # the binary's limit, without a build
    with pytest.raises(XnfError, match=message):
        chain.members_of(nf)
