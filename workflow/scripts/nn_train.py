"""Rules nn_train and nn_train_retrain -> unlearn_audit.pipeline.nn_runs.train."""

import sys

from unlearn_audit.pipeline import nn_runs
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import job_gpu_slot, limit_threads

start_job_log(snakemake.log[0], snakemake.output)  # noqa: F821  (stderr to the log; a summary line at the end)
limit_threads(snakemake.threads)  # noqa: F821
p, inp = snakemake.params, snakemake.input  # noqa: F821
# A GPU job holds one GPU slot (CUDA_VISIBLE_DEVICES) before anything touches CUDA.
with job_gpu_slot(snakemake.config["device"], snakemake.config["results_dir"], log=sys.stderr):  # noqa: F821
    nn_runs.train(snakemake.wildcards.design, p.job["cfg"], p.seed, inp.data, inp.signs, p.job["models"], device=snakemake.config["device"])  # noqa: F821
