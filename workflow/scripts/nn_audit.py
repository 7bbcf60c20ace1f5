"""Thin entry point: overlaps and bounds from evaluation runs."""

import sys

import pandas as pd

from unlearn_audit import schemas
from unlearn_audit.experiment import audit_tables
from unlearn_audit.io import write_parquet

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
fit = pd.read_parquet(snakemake.input.fit)  # noqa: F821
scores = pd.concat([pd.read_parquet(f) for f in snakemake.input.scores], ignore_index=True)  # noqa: F821
signs = pd.read_parquet(snakemake.input.signs)  # noqa: F821
p = snakemake.params  # noqa: F821
overlaps, bounds = audit_tables(fit, scores, signs[signs.phase == "eval"], p.m, p.r, zeta=p.zeta)
write_parquet(overlaps, snakemake.output.overlaps, schemas.OVERLAPS)  # noqa: F821
write_parquet(bounds, snakemake.output.bounds, schemas.BOUNDS)  # noqa: F821
