"""An instance's log (the run directory's NAME.log, appended to by every start the service makes) moves aside once
it has grown past its bound, keeping one older file."""

from __future__ import annotations

from xnf.service import apply


def test_a_log_past_its_bound_moves_aside_and_one_older_is_kept(tmp_path):
    log = tmp_path / "edge.log"
    apply.rotate_log(log, max_bytes=10)            # none yet: nothing to do
    log.write_text("first run, long enough\n")
    apply.rotate_log(log, max_bytes=10)
    assert not log.exists() and (tmp_path / "edge.log.1").read_text() == "first run, long enough\n"
    log.write_text("second run, long too\n")
    apply.rotate_log(log, max_bytes=10)
    assert (tmp_path / "edge.log.1").read_text() == "second run, long too\n"
    log.write_text("short\n")
    apply.rotate_log(log, max_bytes=10)
    assert log.read_text() == "short\n"
