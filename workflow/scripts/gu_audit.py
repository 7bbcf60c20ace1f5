"""Thin entry point: audit table of one-step Newton + Gaussian noise."""

import sys
from pathlib import Path

from unlearn_audit.gaussian_unlearning.cells import run_audit
from unlearn_audit.io import write_parquet
from unlearn_audit.report import write_table
from unlearn_audit.report.gaussian_unlearning import audit_table
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
rows = run_audit(p.spec, p.model, p.seed)
write_parquet(rows, snakemake.output.raw)  # noqa: F821
write_table(audit_table(rows), Path(snakemake.output[0]).with_suffix(""), caption="Audit of one-step Newton + Gaussian noise: mu lower bounds vs the truth")  # noqa: F821
