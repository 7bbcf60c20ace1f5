"""The HTML report of the shared run (``snakemake --report``, tests/workflow/conftest.py) as text:
every caption (workflow/report/*.rst, rendered by Jinja and then docutils) renders without a docutils
system message, and every file is labelled (``report(..., labels=...)`` in workflow/rules/*.smk), so
that the report lists it by its paper name, one row per file (docs/workflow.md, "make report").
tests/workflow/test_report_browser.py clicks through the same report in a browser."""

from __future__ import annotations

import re
from collections import defaultdict

import yaml

from report_data import report_categories, report_object, report_results
from workflow_utils import REPO

RULES = REPO / "workflow" / "rules"


def _report_calls(text: str) -> list[str]:
    """The argument text of every ``report(...)`` call in ``text`` (parentheses balanced)."""
    calls = []
    for found in re.finditer(r"\breport\(", text):
        depth, i = 1, found.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        calls.append(text[found.end():i - 1])
    return calls


def test_every_report_item_of_the_rules_has_labels():
    calls = {path.name: _report_calls(path.read_text()) for path in sorted(RULES.glob("*.smk"))}
    assert sum(map(len, calls.values())) >= 15, calls
    unlabelled = [(name, call.split(",")[0].strip()) for name, found in calls.items() for call in found if "labels=" not in call]
    assert not unlabelled, f"report() items without labels=: {unlabelled}"


def test_the_report_renders_every_caption_without_a_docutils_system_message(shared_report):
    """A caption that docutils cannot parse cleanly (an unescaped ``|x|``, a bullet whose second line
    lost its indent to Jinja's lstrip_blocks) is still rendered, with a "System Message" box in it."""
    html = shared_report.read_text()
    results = report_results(shared_report)
    assert len(results) >= 30
    broken = {path: re.findall(r"System Message: (\w+/\d)", result["caption"]) for path, result in results.items()}
    assert not {path: found for path, found in broken.items() if found}, broken
    assert all(result["caption"] for result in results.values()), [p for p, r in results.items() if not r["caption"]]
    for marker in ("System Message", "system-message", "Docutils System Messages"):
        assert marker not in html, f"{marker!r} in the report"


def test_every_file_of_the_report_is_one_row_of_its_subcategory(shared_report):
    """Every file has labels, its kind's name first; within a subcategory no two files share their
    labels (the report would show one of them) and no label but the first takes two values that
    split the subcategory in halves (the report would show a toggle instead of two rows)."""
    results = report_results(shared_report)
    unlabelled = [path for path, result in results.items() if not result["labels"]]
    assert not unlabelled, unlabelled
    for path, result in results.items():
        first, *rest = result["labels"]
        assert first in ("table", "figure", "record") and rest == ["kind"], (path, result["labels"])
        assert result["labels"]["kind"] == path.rsplit(".", 1)[1], (path, result["labels"])
    for category, subcategories in report_categories(shared_report).items():
        for subcategory, paths in subcategories.items():
            labels = [tuple(results[p]["labels"].values()) for p in paths]
            assert len(set(labels)) == len(labels), (category, subcategory, labels)
            for column in range(1, len(labels[0])):
                values = [label[column] for label in labels]
                halves = len(set(values)) == 2 and all(2 * values.count(v) == len(values) for v in values)
                assert not halves, (category, subcategory, labels)
    named = defaultdict(list)
    for path, result in results.items():
        named[next(iter(result["labels"].values()))].append(path)
    assert named["Table 2a"] == ["results/tables/table2a.csv"] and named["GED vs p"] == ["results/figures/gaussian_unlearning_ged_vs_p.png"]
    assert named["Table 2a: every number behind it"] == ["results/convex/table2a_details.csv"]


def test_the_reports_header_is_the_runs_provenance(shared_report):
    """``--report-metadata results/report_metadata.yaml`` (rule provenance writes it): the report's
    landing page lists the run's package, papers, commit, config, seed, level, sections, device and
    software, the file's own values."""
    header = report_object(shared_report, "metadata")
    written = yaml.safe_load((shared_report.parent / "report_metadata.yaml").read_text())
    assert header == written
    assert list(header)[:3] == ["Workflow", "Reproduces", "Commit"] and header["Workflow"].startswith("unlearn-audit ")
    assert header["Reproduces"] == "Auditing of Unlearning Algorithms; Gaussian Certified Unlearning in High Dimensions"
    assert header["Configuration"].startswith("config.yaml beside the results (sha256 ") and header["Sections"]
