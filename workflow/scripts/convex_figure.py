"""Thin entry point: epsilon_LB vs certified epsilon for the convex audits."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.report.convex_tables import convex_figure

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
summaries = pd.concat([pd.read_parquet(f) for f in snakemake.input], ignore_index=True)  # noqa: F821
convex_figure(summaries, Path(snakemake.output[0]).with_suffix(""))  # noqa: F821
