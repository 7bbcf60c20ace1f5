"""Rule nn_unlearn -> unlearn_audit.pipeline.nn_runs.unlearn."""

import sys

from unlearn_audit.pipeline import nn_runs
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.run_stash import chunk_stash
from unlearn_audit.pipeline.runtime import job_gpu_slot, limit_threads

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
limit_threads(snakemake.threads)  # noqa: F821
p, inp = snakemake.params, snakemake.input  # noqa: F821
cfg = snakemake.config  # noqa: F821
# A chunk's finished runs wait in its stash, so a retry of a failed or preempted job keeps them.
stash = chunk_stash(snakemake.output[0], cfg["results_dir"], {"job": p.job, "seed": p.seed}, list(inp), cfg["device"])  # noqa: F821
# A GPU job holds one GPU slot (CUDA_VISIBLE_DEVICES) before anything touches CUDA.
with job_gpu_slot(cfg["device"], cfg["results_dir"], log=sys.stderr):
    job = p.job
    nn_runs.unlearn(
        job["experiments"], job["design_cfg"], job["method"], job["method_params"], p.seed, inp.data, inp.signs,
        job["base_models"], job["scores"], job["metrics"], device=cfg["device"],
        checkpoint_outputs=job["checkpoints"], release_key=job["release_key"], stash=stash,
    )
