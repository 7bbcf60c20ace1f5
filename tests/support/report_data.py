"""What a Snakemake HTML report holds, read from the page itself: the ``results`` and ``categories``
objects its scripts define (``var results = {...};``), as Python dicts."""

from __future__ import annotations

import json
import re
from pathlib import Path


def report_object(report: Path | str, name: str) -> dict:
    """The JSON object the report's ``<script id="{name}">var {name} = ...;</script>`` defines."""
    text = Path(report).read_text()
    found = re.search(rf'<script id="{name}">\s*var {name} = (.*?);\s*</script>', text, flags=re.DOTALL)
    assert found, f"the report defines no {name}"
    return json.loads(found.group(1))


def report_results(report: Path | str) -> dict:
    """{path: the report's record of that file (caption as HTML, labels, mime type, job)}."""
    return report_object(report, "results")


def report_categories(report: Path | str) -> dict:
    """{category: {subcategory: [paths]}}, as the report's menu groups its files."""
    return report_object(report, "categories")
