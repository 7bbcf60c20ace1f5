"""Thin entry point: gather the cells of one experiment and draw its figure."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.io import write_parquet
from unlearn_audit.report.gaussian_unlearning import error_figure

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
exp = snakemake.wildcards.gu_experiment  # noqa: F821
raw = pd.concat([pd.read_parquet(f) for f in snakemake.input], ignore_index=True)  # noqa: F821
write_parquet(raw, snakemake.output.raw)  # noqa: F821
x, by, title = {
    "ged_vs_p": ("p", "m", "GED vs dimension (n = p)"),
    "ged_vs_eps": ("epsilon", "m", "GED vs privacy level"),
    "ged_vs_m": ("m", "p", "GED vs number of removed points"),
}[exp]
error_figure(raw, x, "ged", by, Path(snakemake.output.figure[0]).with_suffix(""), title)  # noqa: F821
