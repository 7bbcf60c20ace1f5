# Neural-network audits (paper Sections 5-7): data -> signs -> base training (one model per
# sign vector, shared by all experiments of a design) -> unlearning + scores (per experiment)
# -> calibration fits -> overlaps and bounds -> tables and figures.
#
# Training and unlearning process a chunk of runs per job (Python and torch start-up cost
# more than a small model's training), but every run keeps its own output files, so caching
# and invalidation stay per run.  Chunk rules are generated per (design or experiment,
# phase, chunk) so that their outputs are concrete lists of per-run files.


rule nn_prepare_data:
    """Dataset split of a design: retain set, m candidate forget batches of size B, val/test."""
    output:
        data=f"{DESIGNS}/{{design}}/data.npz",
        split=f"{DESIGNS}/{{design}}/split.parquet",
    params:
        cfg=lambda wc: nn_design(wc.design, keys=("dataset", "split", "batch_size", "m", "dataset_params")),
        seed=config["seed"],
        resources=config["resources_dir"],
    log:
        f"{LOGS}/nn/{{design}}/prepare_data.log",
    conda:
        CPU_ENV
    script:
        "../scripts/nn_prepare_data.py"


rule nn_sample_signs:
    """Every sign vector of a design, calibration and evaluation phases from disjoint streams."""
    output:
        f"{DESIGNS}/{{design}}/signs.parquet",
    params:
        cfg=lambda wc: nn_design(wc.design, keys=("m", "calibration_runs", "evaluation_runs")),
        seed=config["seed"],
    log:
        f"{LOGS}/nn/{{design}}/signs.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_sample_signs.py"


for _design, _phase, _chunk, _runs in nn_design_chunks():

    rule:
        name:
            f"nn_train_{_design}_{_phase}_{_chunk}"
        input:
            data=f"{DESIGNS}/{_design}/data.npz",
            signs=f"{DESIGNS}/{_design}/signs.parquet",
        output:
            [base_model_path(_design, _phase, run) for run in _runs],
        params:
            design=_design,
            cfg=nn_design(_design, keys=("model", "train", "dataset", "split", "batch_size", "m", "dataset_params")),
            seed=config["seed"],
            phase=_phase,
            runs=_runs,
        threads: 1
        resources:
            mem_mb=2000,
            runtime=nn_runtime_minutes(_design, len(_runs)),
            gpu=nn_gpus(),
        log:
            f"{LOGS}/nn/{_design}/train_{_phase}_{_chunk}.log",
        benchmark:
            f"{BENCH}/nn/{_design}/train_{_phase}_{_chunk}.tsv"
        conda:
            nn_env()
        script:
            "../scripts/nn_train.py"


for _exp, _phase, _chunk, _runs in nn_experiment_chunks():
    _design = nn_experiment(_exp)["design"]

    rule:
        name:
            f"nn_unlearn_{_exp}_{_phase}_{_chunk}"
        input:
            data=f"{DESIGNS}/{_design}/data.npz",
            signs=f"{DESIGNS}/{_design}/signs.parquet",
            base=[base_model_path(_design, _phase, run) for run in _runs],
        output:
            scores=[run_file(_exp, _phase, run, "scores.parquet") for run in _runs],
            metrics=[run_file(_exp, _phase, run, "metrics.parquet") for run in _runs],
        params:
            experiment=_exp,
            design=_design,
            design_cfg=nn_design(_design, keys=("model", "dataset")),
            method=nn_experiment(_exp)["method"],
            method_params=nn_experiment(_exp)["params"],
            seed=config["seed"],
            phase=_phase,
            runs=_runs,
        threads: 1
        resources:
            mem_mb=2000,
            runtime=nn_runtime_minutes(_design, len(_runs)),
            gpu=nn_gpus(),
        log:
            f"{LOGS}/{_exp}/unlearn_{_phase}_{_chunk}.log",
        benchmark:
            f"{BENCH}/{_exp}/unlearn_{_phase}_{_chunk}.tsv"
        conda:
            nn_env()
        script:
            "../scripts/nn_unlearn_score.py"


rule nn_fit:
    """Per-example in/out Gaussians from calibration runs only (Algorithm 2, step 7)."""
    input:
        scores=lambda wc: nn_run_files(wc.experiment, "calib", "scores.parquet"),
    output:
        f"{RESULTS}/{{experiment}}/fit.parquet",
    params:
        fit=lambda wc: config["nn"]["fit"],
    log:
        f"{LOGS}/{{experiment}}/fit.log",
    conda:
        CPU_ENV
    script:
        "../scripts/nn_fit.py"


rule nn_audit:
    """Guesses, overlaps for every r and Theorem 4.2 bounds from evaluation runs only."""
    input:
        fit=f"{RESULTS}/{{experiment}}/fit.parquet",
        scores=lambda wc: nn_run_files(wc.experiment, "eval", "scores.parquet"),
        signs=lambda wc: f"{DESIGNS}/{nn_experiment(wc.experiment)['design']}/signs.parquet",
    output:
        overlaps=f"{RESULTS}/{{experiment}}/overlaps.parquet",
        bounds=f"{RESULTS}/{{experiment}}/bounds.parquet",
    params:
        m=lambda wc: nn_design(nn_experiment(wc.experiment)["design"])["m"],
        r=lambda wc: nn_experiment(wc.experiment)["r"],
        zeta=config["zeta"],
    log:
        f"{LOGS}/{{experiment}}/audit.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_audit.py"


rule nn_table:
    """Paper Tables 1a, 1b, 3, 4, 5, 7 from the bounds and run metrics of their experiments."""
    input:
        bounds=lambda wc: [f"{RESULTS}/{e}/bounds.parquet" for e in nn_table_experiments(wc.table)],
        metrics=lambda wc: [f for e in nn_table_experiments(wc.table) for f in nn_run_files(e, "eval", "metrics.parquet")],
    output:
        report(
            multiext(f"{TABLES}/{{table}}", ".csv", ".md", ".tex"),
            caption="../report/nn_table.rst",
            category="Neural-network audits",
            subcategory="{table}",
        ),
    params:
        experiments=lambda wc: {e: nn_experiment_summary(e) for e in nn_table_experiments(wc.table)},
    wildcard_constraints:
        table="table1a|table1b|table3|table4|table5|table7",
    log:
        f"{LOGS}/tables/{{table}}.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_table.py"


rule nn_figure_r:
    """Figure: epsilon_LB against r, one line per experiment."""
    input:
        bounds=[f"{RESULTS}/{e}/bounds.parquet" for e in nn_experiments()],
    output:
        report(
            multiext(f"{FIGURES}/nn_epsilon_vs_r", ".png", ".pdf"),
            caption="../report/nn_epsilon_vs_r.rst",
            category="Neural-network audits",
        ),
    params:
        experiments={e: nn_experiment_summary(e) for e in nn_experiments()},
    log:
        f"{LOGS}/figures/nn_epsilon_vs_r.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_figure_r.py"
