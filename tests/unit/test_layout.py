"""Where the Python package finds xnf's programs: a checkout, an installed prefix, or neither (one message)."""

import pytest

from xnf import build
from xnf.build_nf import _checked_name
from xnf.errors import XnfError


@pytest.fixture(autouse=True)
def fresh_layout(monkeypatch):
    build.layout.cache_clear()
    yield
    build.layout.cache_clear()


def installed_prefix(root, nfs=("drop", "firewall")):
    (root / "share/xnf").mkdir(parents=True)
    (root / "share/xnf/nfs").write_text("\n".join(nfs) + "\n")
    (root / "share/xnf/nf.mk").write_text("")
    return root


def test_this_package_sits_in_a_checkout():
    where = build.layout()
    assert where.checkout and where.bin_dir == build.REPO_ROOT / "build/bin"
    assert "firewall" in where.shipped_nfs() and where.nf_mk.name == "nf.mk"


def test_xnf_prefix_names_an_installed_prefix(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PREFIX", str(installed_prefix(tmp_path / "opt")))
    where = build.layout()
    assert not where.checkout and where.bin_dir == tmp_path / "opt/bin"
    assert where.bpf_dir == tmp_path / "opt/lib/xnf/bpf" and where.shipped_nfs() == ["drop", "firewall"]
    assert build.test_nfs() == []


def test_xnf_prefix_that_is_neither_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PREFIX", str(tmp_path))
    with pytest.raises(XnfError, match="neither an xnf checkout nor a prefix xnf is installed under"):
        build.layout()


def test_user_nfs_are_found_after_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PREFIX", str(installed_prefix(tmp_path / "opt")))
    monkeypatch.setenv("XNF_NF_DIR", str(tmp_path / "mine"))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/xnf-portblock").write_text("#!/bin/sh\n")
    (tmp_path / "mine/xnf-portblock").chmod(0o755)
    (tmp_path / "mine/xnf-notes").write_text("not executable")
    assert build.available_nfs() == ["drop", "firewall", "portblock"]
    assert build.nf_binary("portblock") == tmp_path / "mine/xnf-portblock"
    with pytest.raises(XnfError, match="unknown NF 'notes'.*xnf build DIR"):
        build.nf_binary("notes")


@pytest.mark.parametrize("folder, name, message", [
    ("missing", None, "is not a folder"),
    ("empty", "empty", "holds no empty.c"),
    ("Bad-Name", "Bad-Name", "cannot name an NF"),
    ("firewall", "firewall", "is an NF xnf ships"),
])
def test_an_nf_folder_is_checked_before_anything_builds(tmp_path, folder, name, message):
    path = tmp_path / folder
    if name:
        path.mkdir()
        if name != "empty":
            (path / f"{name}.c").write_text("")
    with pytest.raises(XnfError, match=message):
        _checked_name(path)
