"""Citations of documents hold: no file cites the design note or the formula note, two documents
that were never part of the repository (their content lives in docs/, chiefly docs/calibrations.md,
docs/workflow.md and docs/schemas.md), and every citation of a documentation page names a page
that exists and a section it has: ``docs/<page>.md §N`` (also ``§N–M``, ``§N, §M`` and
``§N and §M``, sections being headings such as ``## 6. Title``, ``## 6a. Title`` or ``## §6 Title``)
and ``docs/<page>.md#anchor`` (the anchor of a heading, as GitHub makes it).

The files checked are the text files git tracks or would track (``git ls-files --cached --others
--exclude-standard``: a new file counts before it is committed).  Pure text checks: no workflow run,
no torch.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from workflow_utils import script_module

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
THIS = Path(__file__).resolve()

_links = script_module(THIS.with_name("test_readme_links.py"), "readme_links")
anchors, prose = _links.anchors, _links._prose

#: How the two missing documents were cited: by file name, or by name and section ("§3", "3",
#: "sec. 3"); the formula note's name is cited nowhere else.  Case matters for the names alone
#: (``DESIGN`` is also a constant of analysis/ and benchmarks/, never followed by a section).
MISSING_DOCUMENT = re.compile(
    r"\b(?i:design|formulas)\.md\b"
    r"|\bFORMULAS\b"
    r"|\bDESIGN\s*(?:§|sec(?:tion|\.)?\s*\d|\d)"
    r"|\bDESIGN (?:doc|document|note)\b"
)
_SECTION = r"§\s*\d+[a-z]?(?:\s*[–-]\s*\d+[a-z]?)?"
#: ``docs/<page>.md`` (or a Markdown link whose text it is), then one or more sections.
SECTION_CITATION = re.compile(
    rf"(?<![\w-])docs/([\w.-]+\.md)(?:\]\([^)\s]*\))?\s*({_SECTION}(?:\s*(?:,|;|and)\s*{_SECTION})*)"
)
ANCHOR_CITATION = re.compile(r"(?<![\w-])docs/([\w.-]+\.md)#([^\s)`'\",;]+)")
PAGE_CITATION = re.compile(r"(?<![\w-])docs/([\w.-]+\.md)\b")
HEADING_SECTION = re.compile(r"^#{1,6}\s+§?\s*(\d+[a-z]?)(?:[.:]|\s|$)")


def checked_files() -> list[Path]:
    """The text files of the repository (tracked, or new and not ignored), this file excepted."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    out = []
    for name in filter(None, names):
        path = REPO / name
        if path.resolve() == THIS or not path.is_file():
            continue
        head = path.read_bytes()[:8192]
        if b"\0" not in head:
            out.append(path)
    return out


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def sections(page: Path) -> set[str]:
    """The numbered sections of a Markdown page: "6" for "## 6. Title", "6a" for "## 6a. Title",
    "6" for "## §6 Title"; headings inside code blocks do not count."""
    return {found.group(1) for line in prose(page.read_text()).splitlines() if (found := HEADING_SECTION.match(line))}


def _cited_sections(spec: str) -> list[str]:
    """The sections a citation's "§..." part names: both ends of a range and every number between."""
    out = []
    for first, last in re.findall(r"§\s*(\d+[a-z]?)(?:\s*[–-]\s*(\d+[a-z]?))?", spec):
        out.append(first)
        if last:
            if first.isdigit() and last.isdigit():
                out += [str(k) for k in range(int(first) + 1, int(last) + 1)]
            else:
                out.append(last)
    return out


def missing_document_citations(text: str) -> list[str]:
    return [m.group(0) for m in MISSING_DOCUMENT.finditer(text)]


def broken_doc_citations(text: str, docs: Path = DOCS) -> list[str]:
    """Every citation of ``docs/<page>.md`` in ``text`` whose page, section or anchor ``docs`` lacks."""
    broken = []
    for m in PAGE_CITATION.finditer(text):
        if not (docs / m.group(1)).is_file():
            broken.append(f"{m.group(0)} (no such page)")
    for m in SECTION_CITATION.finditer(text):
        page = docs / m.group(1)
        if page.is_file():
            have = sections(page)
            broken += [f"docs/{m.group(1)} §{s} (no section {s})" for s in _cited_sections(m.group(2)) if s not in have]
    for m in ANCHOR_CITATION.finditer(text):
        page, anchor = docs / m.group(1), m.group(2).rstrip(".:")
        if page.is_file() and anchor not in anchors(page):
            broken.append(f"docs/{m.group(1)}#{anchor} (no such heading)")
    return broken


def test_the_checks_find_what_they_look_for(tmp_path):
    for cited in ("as in DESIGN §3", "(DESIGN 7)", "DESIGN sec. 4", "see DESIGN.md", "FORMULAS §1.4(a)",
                  "FORMULAS, Table 6", "formulas.md"):
        assert missing_document_citations(cited), cited
    for fine in ("DESIGN = 'digits'", "f'{DESIGN}_retain'", "--epoch CONFIG:DESIGN", "DESIGNS[name]", "a design §"):
        assert not missing_document_citations(fine), fine
    (tmp_path / "page.md").write_text("# Page\n\n## 1. One\n\n## 2a. Two\n\n## §3 Three\n\n```\n## 4. Code\n```\n")
    assert sections(tmp_path / "page.md") == {"1", "2a", "3"}
    good = ("docs/page.md §1", "docs/page.md §2a, §3", "docs/page.md §2a and §3", "[docs/page.md](page.md) §3",
            "docs/page.md#2a-two", "docs/page.md#page.")
    for text in good:
        assert broken_doc_citations(text, tmp_path) == [], text
    assert broken_doc_citations("docs/page.md §1–3", tmp_path) == ["docs/page.md §2 (no section 2)"]
    assert broken_doc_citations("docs/page.md §4", tmp_path) == ["docs/page.md §4 (no section 4)"]
    assert broken_doc_citations("docs/page.md §1,\n§5", tmp_path) == ["docs/page.md §5 (no section 5)"]
    assert broken_doc_citations("docs/gone.md §1", tmp_path) == ["docs/gone.md (no such page)"]
    assert broken_doc_citations("docs/page.md#no-such", tmp_path) == ["docs/page.md#no-such (no such heading)"]


def test_the_pages_have_their_sections():
    assert {"0", "1", "3a", "6", "6a", "6b", "9"} <= sections(DOCS / "bounds.md")
    assert {str(k) for k in range(14)} <= sections(DOCS / "calibrations.md")


def test_no_file_cites_the_missing_design_or_formula_notes():
    found = {}
    for path in checked_files():
        hits = missing_document_citations(_text(path))
        if hits:
            found[str(path.relative_to(REPO))] = sorted(set(hits))
    assert not found, f"cite docs/ (e.g. docs/calibrations.md §4) or the paper instead: {found}"


def test_every_docs_citation_names_an_existing_page_and_section():
    found = {}
    for path in checked_files():
        broken = broken_doc_citations(_text(path))
        if broken:
            found[str(path.relative_to(REPO))] = broken
    assert not found, f"citations of docs/ pages that lead nowhere: {found}"
