"""The one results writer: a JSON with everything, the command line and the name; a CSV of the rows."""

import csv
import json

from xnf import results_file


def test_json_and_csv_side_by_side(tmp_path):
    rows = [{"subject": "xdp", "mpps": 1.5, "cores": (0, 1)}, {"subject": "afxdp", "mpps": 2.0, "extra": "x"}]
    path = results_file.write(tmp_path / "out", "study", {"environment": {"kernel": "6.18"}, "samples": []}, rows)
    doc = json.loads(path.read_text())
    assert path.name.startswith("study-") and doc["benchmark"] == "study" and doc["command"]
    assert doc["environment"] == {"kernel": "6.18"}
    table = list(csv.DictReader(path.with_suffix(".csv").open()))
    assert table[0] == {"subject": "xdp", "mpps": "1.5", "cores": "0,1", "extra": ""}
    assert table[1]["extra"] == "x"


def test_a_document_may_name_its_benchmark_itself(tmp_path):
    path = results_file.write(tmp_path, "grid", {"benchmark": {"name": "grid", "nfs": ["drop"]}}, [])
    assert json.loads(path.read_text())["benchmark"] == {"name": "grid", "nfs": ["drop"]}
