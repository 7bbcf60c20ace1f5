# The plan of the run (unlearn_audit.pipeline.plan.WorkflowPlan): experiments, chunks, input
# functions and targets, tested as plain Python; plus the rules' global constants and wildcards.
from unlearn_audit import catalogue
from unlearn_audit.pipeline.plan.paths import CHUNK_PATTERN as CHUNK
from unlearn_audit.pipeline.plan import GAUSSIAN_UNLEARNING_EXPERIMENTS, WorkflowPlan

plan = WorkflowPlan(config)
RESULTS = config["results_dir"]
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
CPU_ENV = "../envs/cpu.yaml"
GPU_ENV = "../envs/cuda.yaml"
NN_ENV = GPU_ENV if config["device"] == "cuda" else CPU_ENV


wildcard_constraints:
    ext="csv|md|tex|png|pdf",
    design=catalogue.NAME_PATTERN,
    experiment=catalogue.NAME_PATTERN,
    phase="calib|eval",
    run="[0-9]+",
    mechanism=catalogue.pattern(catalogue.CONVEX_MECHANISMS),
    epsilon="[0-9][0-9.e+\-]*",
    gu_experiment="|".join(GAUSSIAN_UNLEARNING_EXPERIMENTS),
    x="[0-9][0-9.e+\-]*",
