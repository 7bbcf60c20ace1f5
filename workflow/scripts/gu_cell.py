"""Thin entry point: one grid cell of a Gaussian-unlearning experiment."""

import sys

from unlearn_audit.gaussian_unlearning.cells import run_cell
from unlearn_audit.io import write_parquet
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
frame = run_cell(snakemake.wildcards.gu_experiment, float(snakemake.wildcards.x), p.spec, p.model, p.seed)  # noqa: F821
write_parquet(frame, snakemake.output[0])  # noqa: F821
