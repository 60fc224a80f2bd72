"""Every relative link in README.md and docs/ names a file or folder that is in the repository.

Results move into dated subfolders as they are superseded; a page that still points at the old place sends the
reader to nothing. External links (with a scheme) and in-page anchors are not checked.
"""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def relative_targets(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)  # code blocks hold commands, not links
    targets = [m.group(1) for m in LINK.finditer(text)]
    return [t for t in targets if "://" not in t and not t.startswith(("#", "mailto:"))]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    missing = [t for t in relative_targets(page) if not (page.parent / t.split("#")[0]).exists()]
    assert not missing, f"{page.relative_to(REPO)} links to what is not there: {missing}"
