"""How often the daemon starts a dead instance again (python/xnf/service/daemon.py, Revivals): as systemd's start
limit, RESTARTS times within a window; an instance that died four times 6 s apart once was left down at the fourth
because the count never forgot (issue 69, row 8)."""

from __future__ import annotations

from xnf.service.daemon import RESTARTS, Revivals


def test_deaths_spread_wider_than_the_window_are_all_revived():
    revivals = Revivals(window_s=10)
    assert all(revivals.allow("a", 6.0 * death) for death in range(20))
    assert revivals.left_down == {}


def test_one_death_too_many_within_the_window_leaves_it_down_and_says_why():
    revivals = Revivals(window_s=10)
    assert all(revivals.allow("a", float(death)) for death in range(RESTARTS))
    assert not revivals.allow("a", float(RESTARTS))
    assert "a" in revivals.left_down and "within 10 s" in revivals.left_down["a"]
    assert not revivals.allow("a", 1000.0)            # down until the file is applied again
    assert revivals.allow("b", float(RESTARTS))       # another instance counts its own
