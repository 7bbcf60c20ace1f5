"""Thin entry point: unlearn and score one chunk of runs of an experiment."""

import sys

from unlearn_audit.nn_pipeline import unlearn_and_score
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
unlearn_and_score(
    p.experiment, p.design, p.design_cfg, p.method, p.method_params, p.seed,
    snakemake.input.data, snakemake.input.signs, p.phase, p.runs,  # noqa: F821
    list(snakemake.input.base), list(snakemake.output.scores), list(snakemake.output.metrics),  # noqa: F821
    device=snakemake.config["device"],  # noqa: F821
)
