"""Thin entry point: base models of one chunk of runs."""

import sys

from unlearn_audit.nn_pipeline import train_base_models
from unlearn_audit.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
train_base_models(p.design, p.cfg, p.seed, snakemake.input.data, snakemake.input.signs, p.phase, p.runs, list(snakemake.output),  # noqa: F821
                  device=snakemake.config["device"])  # noqa: F821
