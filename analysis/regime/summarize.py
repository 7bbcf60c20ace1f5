"""Print results/regime's table1b (epsilon_lb at report_r, accuracies) beside each job's wall seconds.

    .venv/bin/python analysis/regime/summarize.py [results/regime]
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "results" / "regime")
pd.set_option("display.width", 250, "display.max_columns", 40, "display.max_colwidth", 60)
table = root / "tables" / "table1b.csv"
print(f"== {table}")
print(pd.read_csv(table).to_string(index=False))
rows = []
for f in sorted((root / "benchmarks").rglob("*")):
    if f.is_file():
        try:
            b = pd.read_csv(f, sep="\t")
        except Exception:
            continue
        if "s" in b.columns:
            rows.append({"job": str(f.relative_to(root / "benchmarks")), "s": float(b["s"].iloc[0])})
if rows:
    bench = pd.DataFrame(rows)
    print(f"\n== job wall seconds ({root / 'benchmarks'})")
    print(bench.to_string(index=False))
