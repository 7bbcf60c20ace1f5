"""Thin entry point: Table 2a/2b from the cells' summaries."""

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.io import atomic_path
from unlearn_audit.report import write_table
from unlearn_audit.report.convex_tables import TABLE_CAPTIONS, convex_table

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
summaries = pd.concat([pd.read_parquet(f) for f in snakemake.input], ignore_index=True)  # noqa: F821
table = snakemake.wildcards.table  # noqa: F821
write_table(convex_table(summaries), Path(snakemake.output[0]).with_suffix(""), caption=TABLE_CAPTIONS.get(table, table))  # noqa: F821
with atomic_path(snakemake.output.details) as tmp:  # noqa: F821
    summaries.sort_values("epsilon").to_csv(tmp, index=False)
