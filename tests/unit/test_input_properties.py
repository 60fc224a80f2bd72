"""Property tests of what the operator tools read from users: mixes, machine profiles, rules files handed to cost and
advise, control requests, and the command line itself. Whatever the input, the outcome is the value or one XnfError
(argparse's usage error for the command line): never another exception, never an unbounded read.

The suite runs each for a bounded number of examples (the 'suite' profile); `make fuzz` runs them far longer
(HYPOTHESIS_PROFILE=fuzz, scripts/fuzz)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_cost_model import BASELINE, TaskCost, cost, synthetic_profile
from xnf import control, mix, user_files
from xnf.commands import main as cli
from xnf.errors import XnfError
from xnf.model import advisor
from xnf.model.profile import from_dict

settings.register_profile("suite", max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz", max_examples=20000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz-chunk", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children,
                                                                                      max_size=4), max_leaves=12)


def paths_of(doc, prefix=()):
    """Every key path into a JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths_of(v, prefix + (k,))


PROFILE = json.loads(synthetic_profile().to_json())
PROFILE_PATHS = [p for p in paths_of(PROFILE) if p]


@given(where=st.sampled_from(PROFILE_PATHS), value=JSON)
def test_a_profile_with_any_field_replaced_is_read_or_refused(where, value):
    doc = json.loads(json.dumps(PROFILE))
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    try:
        profile = from_dict(doc)
    except XnfError:
        return
    advisor.advice(profile, "firewall", TaskCost(cost("firewall", 10, 15), BASELINE), False)


@given(doc=JSON)
def test_any_json_is_read_as_a_profile_or_refused(doc):
    with pytest.raises(XnfError):
        from_dict(doc if not isinstance(doc, dict) else {**doc, "xnf_profile": 1} if len(doc) < 3 else doc)


@given(text=st.text(max_size=300))
def test_any_mix_text_gives_options_or_one_error(text):
    try:
        words = mix.parse(text) if not os.path.exists(text) else []
    except XnfError:
        return
    assert all(isinstance(w, str) for w in words)


@given(data=st.binary(max_size=400))
def test_any_mix_file_gives_options_or_one_error(data, tmp_path):
    path = tmp_path / "mix.txt"
    path.write_bytes(data)
    try:
        mix.parse(str(path))
    except XnfError:
        pass


@given(data=st.binary(max_size=3000))
def test_any_rules_file_is_copied_whole_or_refused(data, tmp_path):
    source, copy = tmp_path / "rules", tmp_path / "copy"
    source.write_bytes(data)
    try:
        user_files.copy_rules(source, copy, max_line=64, max_bytes=2048)
    except XnfError:
        return
    assert copy.read_bytes() == data and len(data) <= 2048


@given(line=st.text(max_size=1500))
def test_any_request_is_sent_or_refused_before_sending(line, monkeypatch):
    monkeypatch.setattr("xnf.contract.limit", lambda name: {"control_request": 1023}[name])
    try:
        control.check_request(line)
    except XnfError:
        return
    assert "\n" not in line and len(line.encode()) <= 1023


WORDS = st.sampled_from(["stats", "top", "dump", "cost", "advise", "rules", "ps", "list", "build", "exporter", "doctor",
                         "entries", "--interval", "-i", "--count", "-c", "--frames", "--repeat", "--cores", "--json",
                         "--name", "--verdict", "--mix", "--rules", "--listen", "add", "del", "firewall", "nan", "inf",
                         "-1", "0", "1e300", "999999999999999999999", "", "----class", "--all"]) | st.text(max_size=6)


@given(argv=st.lists(WORDS, max_size=7))
def test_the_command_line_is_parsed_or_refused(argv):
    parser = cli.make_parser()
    try:
        parser.parse_known_args(argv)
    except SystemExit as done:
        assert done.code in (0, 2)
