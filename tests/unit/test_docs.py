"""The README fits a screen and sends the reader on: every link in it, in CONTRIBUTING.md and in docs/
leads to a file that exists (and, for a link to a heading, to that heading)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_leads_somewhere(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if not found.exists():
            broken.append(target)
        elif anchor and found.suffix == ".md":
            headings = {_anchor(h) for h in re.findall(r"^#+ (.+)$", found.read_text(), flags=re.M)}
            if anchor not in headings:
                broken.append(target)
    assert broken == []


def test_every_page_in_docs_is_linked_from_the_readme_or_another_page():
    linked = {
        (page.parent / target.partition("#")[0]).resolve()
        for page in PAGES
        for target in LINK.findall(page.read_text())
        if not target.startswith(("http", "#"))
    }
    assert [page.name for page in PAGES[2:] if page.resolve() not in linked] == []
