# Config helpers, target lists and global wildcard constraints (one place for all of them).

RESULTS = config["results_dir"]
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
CPU_ENV = "../../envs/cpu.yaml"
GPU_ENV = "../../envs/cuda.yaml"
TABLE_EXTS = ["csv", "md", "tex"]
FIGURE_EXTS = ["png", "pdf"]


wildcard_constraints:
    ext="csv|md|tex|png|pdf",


def table_files(name):
    return expand(f"{TABLES}/{name}.{{ext}}", ext=TABLE_EXTS)


def figure_files(name):
    return expand(f"{FIGURES}/{name}.{{ext}}", ext=FIGURE_EXTS)


def all_targets():
    targets = []
    if config["perfect_prediction"]["enabled"]:
        targets += table_files("attainable_bounds")
    return targets
