"""Thin entry point: one (mechanism, epsilon) cell of Table 2."""

import sys

from unlearn_audit import schemas
from unlearn_audit.convex.cells import audit_cell
from unlearn_audit.io import write_parquet
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
decisions, summary = audit_cell(
    snakemake.wildcards.mechanism, float(snakemake.wildcards.epsilon),  # noqa: F821
    p.params, {**p.settings, "zeta": p.zeta}, p.seed,
)
write_parquet(decisions, snakemake.output.decisions, schemas.CONVEX_DECISIONS)  # noqa: F821
write_parquet(summary, snakemake.output.summary)  # noqa: F821
