"""The machine facts stored with every results file: the CPU's mitigations, which move a ratio to Linux's own
forwarding between machines."""

from xnf.analysis import report
from xnf.lab import environment


def test_the_mitigations_that_apply_are_kept_word_for_word(tmp_path):
    (tmp_path / "spectre_v2").write_text("Mitigation: Retpolines; STIBP: disabled\n")
    (tmp_path / "spec_rstack_overflow").write_text("Vulnerable: Safe RET, no microcode\n")
    (tmp_path / "meltdown").write_text("Not affected\n")
    assert environment.cpu_mitigations(tmp_path) == {
        "spec_rstack_overflow": "Vulnerable: Safe RET, no microcode",
        "spectre_v2": "Mitigation: Retpolines; STIBP: disabled"}


def test_a_kernel_without_the_folder_has_none(tmp_path):
    assert environment.cpu_mitigations(tmp_path / "absent") == {}


def test_the_environment_says_them():
    described = environment.describe()
    assert described["cpu_mitigations"] == environment.cpu_mitigations()


def test_the_report_names_them_and_leaves_out_what_older_files_lack():
    line = report._mitigations_line({"cpu_mitigations": {"spectre_v2": "Mitigation: Retpolines"}})
    assert line == ["- CPU mitigations: spectre_v2: Mitigation: Retpolines"]
    assert report._mitigations_line({"kernel": "6.18"}) == []
