"""pipeline/job_log.py: a job's stderr goes to its log, which ends with one line of what it wrote
(the pre-registered ε_LB for a BOUNDS file) when the job finished, and with the traceback when it
failed."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

JOB = r"""
import sys
import pandas as pd
from unlearn_audit.pipeline.job_log import start_job_log
log, out, fail = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
start_job_log(log, [out])
print("working", file=sys.stderr)
if fail:
    raise RuntimeError("the job broke")
pd.DataFrame({"role": ["exploratory", "preregistered"], "r": [2, 4], "statistic": ["mean", "mean"],
              "score": ["logit", "logit"], "epsilon_lb": [0.5, 1.25]}).to_parquet(out)
"""


def run_job(tmp_path, fail: bool):
    log, out = tmp_path / "job.log", tmp_path / "bounds.parquet"
    proc = subprocess.run([sys.executable, "-c", JOB, str(log), str(out), "1" if fail else "0"], capture_output=True, text=True)
    return proc, log.read_text().strip().splitlines()


def test_a_finished_job_ends_its_log_with_what_it_wrote(tmp_path):
    proc, lines = run_job(tmp_path, fail=False)
    assert proc.returncode == 0 and proc.stderr == ""
    assert lines[0] == "working" and len(lines) == 2
    assert lines[-1].startswith("done in ") and "bounds.parquet (2 rows" in lines[-1]
    assert "preregistered cell (4, mean, logit): epsilon_LB = 1.25" in lines[-1]


def test_a_failed_job_ends_its_log_with_the_traceback(tmp_path):
    proc, lines = run_job(tmp_path, fail=True)
    assert proc.returncode != 0
    assert lines[-1] == "RuntimeError: the job broke" and not any(line.startswith("done") for line in lines)
    assert not (tmp_path / "bounds.parquet").exists()


def test_the_summary_counts_rows_and_names_at_most_five_files(tmp_path):
    from unlearn_audit.pipeline.job_log import output_summary

    csv = tmp_path / "tables" / "table1b.csv"
    csv.parent.mkdir()
    pd.DataFrame({"x": [1, 2, 3]}).to_csv(csv, index=False)
    blobs = []
    (tmp_path / "models").mkdir()
    for i in range(6):
        blobs.append(tmp_path / "models" / f"{i}.pt")
        blobs[-1].write_bytes(b"x" * 10)
    line = output_summary([csv, *blobs], 2.0)
    assert line.startswith("done in 2.0 s: wrote tables/table1b.csv (3 rows), models/0.pt (10 bytes)")
    assert line.endswith("models/3.pt (10 bytes) and 2 more")
    assert output_summary([]) == "done: wrote nothing"
