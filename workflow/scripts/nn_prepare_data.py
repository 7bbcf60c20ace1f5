"""Thin entry point: the data split of one design."""

import sys

from unlearn_audit.nn_pipeline import prepare_design_data
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
prepare_design_data(
    snakemake.wildcards.design,  # noqa: F821
    snakemake.params.cfg,  # noqa: F821
    snakemake.params.seed,  # noqa: F821
    snakemake.params.resources,  # noqa: F821
    snakemake.output.data,  # noqa: F821
    snakemake.output.split,  # noqa: F821
)
