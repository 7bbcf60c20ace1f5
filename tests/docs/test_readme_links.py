"""README.md stays a short user's guide (at most 400 lines), and no link of it, or of the pages it
links under docs/ (and config/README.md, the workflow catalog's usage page), leads nowhere: every relative link names an existing file and every #anchor a
heading of the page it points into."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "benchmarks" / "RESULTS.md", REPO / "config" / "README.md"]
MAX_README_LINES = 400
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return "\n".join(out)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _prose(path.read_text()).splitlines():
        found = re.match(r"^#+\s+(.*?)\s*#*$", line)
        if not found:
            continue
        slug = _slug(found.group(1))
        n = seen.get(slug, 0)
        out.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return out


def relative_links(path: Path) -> list[str]:
    # inline code spans may show link syntax without being links
    text = re.sub(r"`[^`\n]*`", "", _prose(path.read_text()))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_readme_is_at_most_400_lines():
    n = len(README.read_text().splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines; move details to docs/ (at most {MAX_README_LINES})"


def test_slug_matches_github():
    assert _slug("Certified audits (Section 7.1)") == "certified-audits-section-71"
    assert _slug("The `unlearn-audit` command") == "the-unlearn-audit-command"
    assert _slug("Algorithms of your own, in full") == "algorithms-of-your-own-in-full"


def test_readme_has_relative_links():
    assert len(relative_links(README)) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target} (no file {dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest})")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading with anchor #{anchor} in {dest.relative_to(REPO)})")
    assert not broken, f"{page.relative_to(REPO)}: broken links: {broken}"
