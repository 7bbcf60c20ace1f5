"""Rule convex_audit -> unlearn_audit.pipeline.convex.audit."""

import sys

from unlearn_audit.pipeline import convex
from unlearn_audit.pipeline.runtime import limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p, w, out = snakemake.params, snakemake.wildcards, snakemake.output  # noqa: F821
convex.audit(w.mechanism, float(w.epsilon), p.params, p.settings, p.zeta, p.seed, out.decisions, out.summary)
