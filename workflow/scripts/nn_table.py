"""Thin entry point: one of the paper's neural-network tables."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.report import write_table
from unlearn_audit.report.nn_tables import NN_TABLES

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
table = snakemake.wildcards.table  # noqa: F821
bounds = pd.concat([pd.read_parquet(f) for f in snakemake.input.bounds], ignore_index=True)  # noqa: F821
metrics = pd.concat([pd.read_parquet(f) for f in snakemake.input.metrics], ignore_index=True)  # noqa: F821
render, caption = NN_TABLES[table]
frame = render(bounds, metrics, snakemake.params.experiments)  # noqa: F821
write_table(frame, Path(snakemake.output[0]).with_suffix(""), caption=caption)  # noqa: F821
