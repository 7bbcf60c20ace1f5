"""Thin entry point: the table of fitted log-log slopes."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.report import write_table
from unlearn_audit.report.gaussian_unlearning import slopes_table

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
raw = {Path(f).stem: pd.read_parquet(f) for f in snakemake.input}  # noqa: F821
write_table(slopes_table(raw), Path(snakemake.output[0]).with_suffix(""), caption="Log-log slopes of mean GED/UED (OLS, standard errors)")  # noqa: F821
