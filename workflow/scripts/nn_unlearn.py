"""Rule nn_unlearn -> unlearn_audit.pipeline.nn_runs.unlearn."""

import sys

from unlearn_audit.pipeline import nn_runs
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import job_gpu_slot, limit_threads

start_job_log(snakemake.log[0], snakemake.output)  # noqa: F821  (stderr to the log; a summary line at the end)
limit_threads(snakemake.threads)  # noqa: F821
p, inp = snakemake.params, snakemake.input  # noqa: F821
# A GPU job holds one GPU slot (CUDA_VISIBLE_DEVICES) before anything touches CUDA.
with job_gpu_slot(snakemake.config["device"], snakemake.config["results_dir"], log=sys.stderr):  # noqa: F821
    job = p.job
    nn_runs.unlearn(
        job["experiments"], job["design_cfg"], job["method"], job["method_params"], p.seed, inp.data, inp.signs,
        job["base_models"], job["scores"], job["metrics"], device=snakemake.config["device"],  # noqa: F821
        checkpoint_outputs=job["checkpoints"], release_key=job["release_key"],
    )
