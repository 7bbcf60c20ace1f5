"""Rules nn_unlearn_<experiment>_<phase>_<chunk> -> unlearn_audit.pipeline.nn_runs.unlearn."""

import sys

from unlearn_audit.pipeline import nn_runs
from unlearn_audit.pipeline.runtime import job_gpu_slot, limit_threads

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
limit_threads(snakemake.threads)  # noqa: F821
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
# A GPU job holds one GPU slot (CUDA_VISIBLE_DEVICES) before anything touches CUDA.
with job_gpu_slot(snakemake.config["device"], snakemake.config["results_dir"], log=sys.stderr):  # noqa: F821
    nn_runs.unlearn(
        list(p.experiments), p.design_cfg, p.method, list(p.method_params), p.seed, inp.data, inp.signs,
        list(inp.base), list(out.scores), list(out.metrics), device=snakemake.config["device"],  # noqa: F821
        checkpoint_outputs=list(out.checkpoints) if hasattr(out, "checkpoints") else None, release_key=p.release_key,
    )
