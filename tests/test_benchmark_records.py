"""benchmarks/throughput.py --append: new throughput rows go at the end of RESULTS.md's table, not
after the prose that follows it (``unlearn-audit plan`` reads the rows wherever they are, but a
reader reads the table)."""

from __future__ import annotations

from pathlib import Path

from workflow_utils import script_module

REPO = Path(__file__).resolve().parents[1]


def _throughput():
    return script_module("benchmarks/throughput.py", "throughput_script")


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


def test_the_workflow_loop_rows_are_the_ones_plan_reads(tmp_path):
    """benchmarks/workflow_loop.py --append: the workflow's default case (fp32, deterministic, one
    process) is a row ``plan`` reads; the other cases are recorded beside it and not read."""
    import subprocess
    import sys

    from unlearn_audit.plan_reports.hours import read_throughputs

    out = tmp_path / "RESULTS.md"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "workflow_loop.py"), "--width", "0.25", "--size", "8",
                           "--channels", "1", "--classes", "10", "--batch", "16", "--steps", "3", "--k", "1", "2",
                           "--deterministic", "on", "off", "--no-clipping", "--append", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in out.read_text().splitlines() if line.startswith("| 20")]
    assert len(rows) == 4 and sum("| fp32 nondet |" in r for r in rows) == 2
    rates = read_throughputs(out, "cpu")
    assert set(rates) == {("tinynet w=0.25", "8x8x1", 1), ("tinynet w=0.25", "8x8x1", 2)}
    default = [r for r in rows if "| fp32 |" in r and "| 2 |" in r][0]
    assert rates[("tinynet w=0.25", "8x8x1", 2)] == float(default.split("|")[-3])
