"""The studies' one skeleton (python/xnf/bench/study.py): every study `xnf bench` runs is written on it, and it
measures in interleaved rounds, keeps the environment, the options' set-up, the summary and the samples in one results
file, and takes the samples of an earlier file instead of measuring when told to."""

from __future__ import annotations

import argparse
import contextlib
import io
import json

import pytest

from xnf import say
from xnf.bench import catalog
from xnf.bench.study import Place, RoundsStudy, Study


@pytest.fixture(autouse=True)
def said(monkeypatch) -> io.StringIO:
    """What the studies say, kept here (another test may have left say's stream a closed capture)."""
    lines = io.StringIO()
    monkeypatch.setattr(say, "info_stream", lines)
    return lines


def test_every_study_is_written_on_the_skeleton():
    for module in catalog.STUDIES:
        assert isinstance(module.STUDY, Study), module.NAME
        assert (module.run, module.add_arguments) == (module.STUDY.run, module.STUDY.add_arguments), module.NAME
        assert module.STUDY.name == module.NAME


def toy(set_up: list, **more) -> RoundsStudy:
    """Two subjects whose rate is their name's length times the round's number plus one."""
    @contextlib.contextmanager
    def lab(args, folder):
        set_up.append("up")
        yield "the lab"
        set_up.append("down")

    def trial(subject: str, args: argparse.Namespace, place: Place) -> dict:
        assert place.lab == "the lab" and place.folder.is_dir()
        return {"subject": subject, "mpps": float(len(subject))}

    settings = dict(subjects=lambda args: ["a", "bb"], trial=trial, lab=lab, line=lambda s: s["subject"],
                    report=lambda row: row["subject"],
                    summarise=lambda samples, args: [
                        {"subject": s, "rounds": sum(x["subject"] == s for x in samples)} for s in ("a", "bb")],
                    fields=lambda args: {"knob": args.knob},
                    options=lambda parser: parser.add_argument("--knob", default="k"))
    return RoundsStudy("toy", "toy", **settings | more)


def parsed(study: Study, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    study.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_a_study_measures_in_interleaved_rounds_and_writes_one_results_file(tmp_path, said):
    set_up = []
    study = toy(set_up)
    path = study.run(parsed(study, "--rounds", "3", "--seconds", "0.1", "--knob", "turned"), tmp_path)
    doc = json.loads(path.read_text())
    assert set_up == ["up", "down"]
    assert [(s["round"], s["subject"]) for s in doc["samples"]] == [(0, "a"), (0, "bb"), (1, "bb"), (1, "a"),
                                                                     (2, "a"), (2, "bb")]
    assert doc["summary"] == [{"subject": "a", "rounds": 3}, {"subject": "bb", "rounds": 3}]
    assert doc["knob"] == "turned" and doc["seconds_per_trial"] == 0.1 and doc["environment"]["kernel"]
    assert path.with_suffix(".csv").read_text().splitlines()[0].startswith("subject")
    assert said.getvalue().splitlines()[-2:] == ["a", "bb"]   # a line per summary row


def test_wrong_options_end_the_study_before_anything_is_set_up(tmp_path):
    set_up = []
    study = toy(set_up, min_rounds=2, check=lambda args: "--knob must not be 'x'" if args.knob == "x" else None)
    for argv, message in ((["--rounds", "1"], "toy: --rounds at least 2"),
                          (["--seconds", "0"], "toy: --seconds above 0"), (["--knob", "x"], "toy: --knob must not be 'x'")):
        with pytest.raises(SystemExit, match=message):
            study.run(parsed(study, *argv), tmp_path)
    assert set_up == [] and not list(tmp_path.iterdir())


def test_an_earlier_results_file_is_judged_again_without_measuring(tmp_path):
    first = toy([]).run(parsed(toy([]), "--rounds", "2"), tmp_path / "first")
    set_up = []
    again = toy(set_up, earlier=lambda args: json.loads(first.read_text()),
                summarise=lambda samples, args: [{"subject": "all", "samples": len(samples),
                                                  "measured": args.measured_in["started_utc"]}])
    path = again.run(parsed(again, "--rounds", "5", "--seconds", "9"), tmp_path / "again")
    doc, earlier = json.loads(path.read_text()), json.loads(first.read_text())
    assert set_up == [] and doc["samples"] == earlier["samples"] and doc["environment"] == earlier["environment"]
    assert doc["seconds_per_trial"] == earlier["seconds_per_trial"] == 2.0
    assert doc["summary"] == [{"subject": "all", "samples": 4, "measured": earlier["environment"]["started_utc"]}]
