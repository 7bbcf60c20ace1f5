"""Thin entry point: figure of epsilon_LB against r."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.report.nn_figures import epsilon_vs_r_figure

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
bounds = pd.concat([pd.read_parquet(f) for f in snakemake.input.bounds], ignore_index=True)  # noqa: F821
epsilon_vs_r_figure(bounds, snakemake.params.experiments, Path(snakemake.output[0]).with_suffix(""))  # noqa: F821
