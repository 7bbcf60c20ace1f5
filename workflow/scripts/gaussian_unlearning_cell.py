"""Rule gaussian_unlearning_cell -> unlearn_audit.pipeline.gaussian_unlearning.cell."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p, w = snakemake.params, snakemake.wildcards  # noqa: F821
gaussian_unlearning.cell(w.gu_experiment, float(w.x), p.spec, p.model, p.seed, snakemake.output[0])  # noqa: F821
