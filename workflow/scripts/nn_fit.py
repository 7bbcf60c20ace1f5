"""Thin entry point: per-example Gaussian fits from calibration runs."""

import sys

import pandas as pd

from unlearn_audit import schemas
from unlearn_audit.experiment import fit_table
from unlearn_audit.io import write_parquet

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
scores = pd.concat([pd.read_parquet(f) for f in snakemake.input.scores], ignore_index=True)  # noqa: F821
fit = fit_table(scores, snakemake.wildcards.experiment, **snakemake.params.fit)  # noqa: F821
write_parquet(fit, snakemake.output[0], schemas.FIT)  # noqa: F821
