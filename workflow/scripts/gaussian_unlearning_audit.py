"""Rule gaussian_unlearning_audit -> unlearn_audit.pipeline.gaussian_unlearning.audit."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
gaussian_unlearning.audit(p.spec, p.model, p.seed, p.zeta, snakemake.output[0], snakemake.output.raw)  # noqa: F821
