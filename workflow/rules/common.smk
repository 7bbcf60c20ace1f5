# Config helpers, target lists, input functions and global wildcard constraints (one place for
# all of them).  Paths come from unlearn_audit.pipeline.paths, one helper per kind of file.
from unlearn_audit.pipeline import paths

RESULTS = config["results_dir"]
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
CPU_ENV = "../../envs/cpu.yaml"
GPU_ENV = "../../envs/cuda.yaml"


wildcard_constraints:
    ext="csv|md|tex|png|pdf",


def table_files(name):
    return paths.table_files(RESULTS, name)


def figure_files(name):
    return paths.figure_files(RESULTS, name)


def table_stem(name):
    return f"{RESULTS}/tables/{name}"


def figure_stem(name):
    return f"{RESULTS}/figures/{name}"


def all_targets():
    targets = []
    if config["perfect_prediction"]["enabled"]:
        targets += table_files("attainable_bounds")
    targets += convex_targets()
    targets += gaussian_unlearning_targets()
    targets += nn_targets()
    return targets


# ----------------------------------------------------------------------------- neural-network audits
NN = config["nn"]


wildcard_constraints:
    design="[A-Za-z0-9][A-Za-z0-9_\-]*",
    experiment="[A-Za-z0-9][A-Za-z0-9_\-]*",
    phase="calib|eval",
    run="[0-9]+",


def nn_enabled():
    return bool(NN["enabled"])


def nn_experiments():
    return list(NN["experiments"]) if nn_enabled() else []


def nn_experiment(name):
    return NN["experiments"][name]


def nn_design(name, keys=None):
    cfg = NN["designs"][name]
    return dict(cfg) if keys is None else {k: cfg[k] for k in keys if k in cfg}


def nn_design_of(experiment):
    return nn_experiment(experiment)["design"]


def nn_used_designs():
    return sorted({nn_design_of(e) for e in nn_experiments()})


def nn_phase_runs(design, phase):
    cfg = nn_design(design)
    return list(range(cfg["calibration_runs"] if phase == "calib" else cfg["evaluation_runs"]))


def _chunks(runs, size):
    return [runs[i : i + size] for i in range(0, len(runs), size)]


def nn_design_chunks():
    out = []
    for design in nn_used_designs():
        for phase in ("calib", "eval"):
            for i, runs in enumerate(_chunks(nn_phase_runs(design, phase), nn_design(design)["chunk_size"])):
                out.append((design, phase, i, runs))
    return out


def nn_experiment_chunks():
    out = []
    for exp in nn_experiments():
        design = nn_design_of(exp)
        for phase in ("calib", "eval"):
            for i, runs in enumerate(_chunks(nn_phase_runs(design, phase), nn_design(design)["chunk_size"])):
                out.append((exp, phase, i, runs))
    return out


def design_file(design, name):
    return paths.design_file(RESULTS, design, name)


def base_model_path(design, phase, run):
    return paths.base_model(RESULTS, design, phase, run)


def experiment_file(experiment, name):
    return paths.experiment_file(RESULTS, experiment, name)


def run_file(experiment, phase, run, name):
    return paths.run_file(RESULTS, experiment, phase, run, name)


def nn_run_files(experiment, phase, name):
    return [run_file(experiment, phase, run, name) for run in nn_phase_runs(nn_design_of(experiment), phase)]


def nn_runtime_minutes(design, n_runs):
    return int(NN["designs"][design].get("runtime_minutes_per_run", 5) * n_runs) + 5


def nn_gpus():
    return 1 if config["device"] == "cuda" else 0


def nn_env():
    return GPU_ENV if config["device"] == "cuda" else CPU_ENV


NN_TABLES = ["table1a", "table1b", "table3", "table4", "table5", "table7"]


def nn_table_experiments(table):
    return [e for e in nn_experiments() if table in nn_experiment(e)["tables"]]


def nn_experiment_summary(name):
    exp = nn_experiment(name)
    design = nn_design(exp["design"])
    return {
        "design": exp["design"],
        "dataset": design["dataset"],
        "split": design["split"],
        "batch_size": design["batch_size"],
        "m": design["m"],
        "method": exp["method"],
        "label": exp.get("label") or exp["method"],
        "params": exp["params"],
        "report_r": exp.get("report_r") or max(exp["r"]),
        "r": exp["r"],
    }


# input and params functions of the nn rules (named, one per use)
def nn_data_params(wildcards):
    return nn_design(wildcards.design, keys=("dataset", "split", "batch_size", "m", "dataset_params"))


def nn_signs_params(wildcards):
    return nn_design(wildcards.design, keys=("m", "calibration_runs", "evaluation_runs"))


def nn_calibration_scores(wildcards):
    return nn_run_files(wildcards.experiment, "calib", "scores.parquet")


def nn_evaluation_scores(wildcards):
    return nn_run_files(wildcards.experiment, "eval", "scores.parquet")


def nn_experiment_signs(wildcards):
    return design_file(nn_design_of(wildcards.experiment), "signs.parquet")


def nn_audit_m(wildcards):
    return nn_design(nn_design_of(wildcards.experiment))["m"]


def nn_audit_cell(wildcards):
    """What the audit's result depends on: the r grid and the pre-registered cell and selection."""
    exp = nn_experiment(wildcards.experiment)
    return {k: exp[k] for k in ("r", "report_r", "statistic", "score", "selection") if k in exp}


def nn_table_bounds(wildcards):
    return [experiment_file(e, "bounds.parquet") for e in nn_table_experiments(wildcards.table)]


def nn_table_metrics(wildcards):
    return [f for e in nn_table_experiments(wildcards.table) for f in nn_run_files(e, "eval", "metrics.parquet")]


def nn_table_summaries(wildcards):
    return {e: nn_experiment_summary(e) for e in nn_table_experiments(wildcards.table)}


def nn_targets():
    if not nn_enabled():
        return []
    targets = [f for t in NN_TABLES if nn_table_experiments(t) for f in table_files(t)]
    if nn_experiments():
        targets += figure_files("nn_epsilon_vs_r")
    return targets


# ----------------------------------------------------------------------------- convex audits
CONVEX = f"{RESULTS}/convex"


wildcard_constraints:
    mechanism="cubic_newton|output_perturbation|logistic_newton",
    epsilon="[0-9][0-9.e+\-]*",


def convex_mechanisms():
    if not config["convex"]["enabled"]:
        return []
    return [name for name, m in config["convex"]["mechanisms"].items() if m["enabled"]]


def convex_epsilon_label(eps):
    return repr(float(eps))


def convex_summaries(mechanism):
    eps = config["convex"]["mechanisms"][mechanism]["epsilons"]
    return [f"{CONVEX}/{mechanism}/eps_{convex_epsilon_label(e)}/summary.parquet" for e in eps]


def convex_table_mechanism(table):
    for name in convex_mechanisms():
        if config["convex"]["mechanisms"][name]["table"] == table:
            return name
    raise ValueError(f"no enabled convex mechanism renders {table}")


def convex_mechanism_params(wildcards):
    return config["convex"]["mechanisms"][wildcards.mechanism]["params"]


def convex_table_summaries(wildcards):
    return convex_summaries(convex_table_mechanism(wildcards.table))


def convex_all_summaries():
    return [f for mech in convex_mechanisms() for f in convex_summaries(mech)]


def convex_targets():
    mechs = convex_mechanisms()
    targets = [f for m in mechs for f in table_files(config["convex"]["mechanisms"][m]["table"])]
    if mechs:
        targets += figure_files("convex_epsilon_lb")
    return targets


# ----------------------------------------------------------------------------- Gaussian certified unlearning
GU = f"{RESULTS}/gaussian_unlearning"
GU_EXPERIMENTS = ["ged_vs_p", "ged_vs_eps", "ged_vs_m"]


wildcard_constraints:
    gu_experiment="ged_vs_p|ged_vs_eps|ged_vs_m",
    x="[0-9][0-9.e+\-]*",


def gaussian_unlearning_grid(experiment):
    spec = config["gaussian_unlearning"][experiment]
    return spec["epsilons"] if experiment == "ged_vs_eps" else spec["p"]


def gaussian_unlearning_cells(wildcards):
    experiment = wildcards.gu_experiment
    return [f"{GU}/{experiment}/cells/{x!r}.parquet" for x in gaussian_unlearning_grid(experiment)]


def gaussian_unlearning_spec(wildcards):
    return config["gaussian_unlearning"][wildcards.gu_experiment]


def gaussian_unlearning_targets():
    if not config["gaussian_unlearning"]["enabled"]:
        return []
    targets = table_files("gaussian_unlearning_slopes") + table_files("gaussian_unlearning_audit")
    targets += [f for e in GU_EXPERIMENTS for f in figure_files(f"gaussian_unlearning_{e}")]
    return targets
