"""benchmarks/throughput.py --append: new throughput rows go at the end of RESULTS.md's table, not
after the prose that follows it (``unlearn-audit plan`` reads the rows wherever they are, but a
reader reads the table)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _throughput():
    spec = importlib.util.spec_from_file_location("throughput_script", REPO / "benchmarks" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_are_added_at_the_end_of_the_table():
    t = _throughput()
    row = "| 2026-12-03 | cpu | tinynet w=0.25 | 8x8x1 | 1 | fp32 | 64 | 1 | 1 |"
    text = f"# Measured throughput\n\n{t.HEADER}\n|---|---|---|---|---|---|---|---|---|\n{row}\n\n## Timing of the default run\n\nprose\n"
    new = row.replace("| 1 | 1 |", "| 2 | 2 |")
    out = t.with_rows(text, [new]).split("\n")
    assert out.index(new) == out.index(row) + 1 and out.index(new) < out.index("## Timing of the default run")
    fresh = t.with_rows("", [new]).split("\n")
    assert t.HEADER in fresh and fresh.index(new) == fresh.index(t.HEADER) + 2
    real = (REPO / "benchmarks" / "RESULTS.md").read_text()
    lines = t.with_rows(real, [new]).split("\n")
    assert lines.index(new) < lines.index("## Timing of the default run")
