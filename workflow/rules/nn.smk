# Neural-network audits (paper Sections 5-7): data -> signs -> base training (one model per
# sign vector, shared by all experiments of a design) -> unlearning + scores (per experiment)
# -> calibration fits -> overlaps and bounds -> tables and figures.
#
# Training and unlearning process a chunk of runs per job (Python and torch start-up cost
# more than a small model's training), but every run keeps its own output files, so caching
# and invalidation stay per run.  Chunk rules are generated per (design or experiment, chunk)
# so that their outputs are concrete lists of per-run files; a chunk is `chunk_size` runs of the
# calibration-then-evaluation order (fewer where the cost model prices that many above
# cluster.walltime_minutes), so it may hold runs of both phases.  On a cluster a chunk is one job
# asking for one GPU at most: chunks, not Snakemake group jobs, bundle runs, since a chunk pays
# process start-up, torch import, CUDA context and data load once for all its runs.  A job reads
# its runs (phase and index) from its output paths, so `chunk_size` is not a param and changing it
# reruns nothing.


rule nn_prepare_data:
    """Dataset split of a design: retain set, m candidate forget batches of size B, val/test."""
    output:
        data=plan.design_file("{design}", "data.npz"),
        split=plan.design_file("{design}", "split.parquet"),
    params:
        cfg=plan.nn_data_params,
        seed=config["seed"],
    resources:
        **plan.nn_step_resources(minutes=30),
    log:
        f"{LOGS}/nn/{{design}}/prepare_data.log",
    conda:
        CPU_ENV
    script:
        "../scripts/nn_prepare_data.py"


rule nn_sample_signs:
    """Every sign vector of a design, calibration and evaluation phases from disjoint streams."""
    output:
        plan.design_file("{design}", "signs.parquet"),
    params:
        cfg=plan.nn_signs_params,
        seed=config["seed"],
    log:
        f"{LOGS}/nn/{{design}}/signs.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_sample_signs.py"


for _design, _chunk, _keys in plan.nn_design_chunks():

    rule:
        name:
            f"nn_train_{_design}_{_chunk}"
        input:
            data=plan.design_file(_design, "data.npz"),
            signs=plan.design_file(_design, "signs.parquet"),
        output:
            plan.nn_train_outputs(_design, _keys),
        params:
            design=_design,
            cfg=plan.nn_train_params(_design),
            seed=config["seed"],
        threads: 1
        resources:
            **plan.nn_job_resources(_design, len(_keys)),
        log:
            f"{LOGS}/nn/{_design}/train_{_chunk}.log",
        benchmark:
            f"{BENCH}/nn/{_design}/train_{_chunk}.tsv"
        conda:
            NN_ENV
        script:
            "../scripts/nn_train.py"


rule nn_base_models:
    """The list of a batchwise design's base models of one phase: the base-model input of that
    phase's unlearning chunks, each of which reads its own runs' models from it."""
    input:
        plan.nn_base_models_of_phase,
    output:
        plan.base_model_list("{design}", "{phase}"),
    wildcard_constraints:
        design=plan.nn_batchwise_design_pattern(),
        phase="calib|eval",
    log:
        f"{LOGS}/nn/{{design}}/base_{{phase}}.log",
    localrule: True
    conda:
        CPU_ENV
    # one line a model (pipeline.paths.read_path_list reads it); a shell command, not `run:`, which
    # Snakemake would execute in a Snakemake subprocess of its own
    shell:
        "(printf '%s\\n' {input:q} > {output:q} && echo \"done: wrote {output} ($(wc -l < {output:q}) base models)\") > {log:q} 2>&1"


# A group is one experiment, or the experiments of one design whose hyperparameters differ only in
# the final noise release (e.g. Table 7's sigma): they share each run's noiseless unlearning and
# each draws its own release noise (unlearn_audit.unlearning.unlearn_variants).
for _group, _chunk, _keys in plan.nn_experiment_chunks():
    _design = plan.nn_design_of(_group[0])

    rule:
        name:
            f"nn_unlearn_{_group[0]}_{_chunk}"
        input:
            data=plan.design_file(_design, "data.npz"),
            signs=plan.design_file(_design, "signs.parquet"),
            # the same for every chunk of the phase (its input set must not depend on chunk_size)
            base=plan.nn_unlearn_base(_group[0]),
        output:
            **plan.nn_unlearn_outputs(_group, _keys),
        params:
            experiments=_group,
            design_cfg=plan.nn_unlearn_design_params(_design),
            method=plan.nn_experiment(_group[0])["method"],
            method_params=[plan.nn_experiment(e)["params"] for e in _group],
            release_key=plan.nn_release_key(_group[0]),
            seed=config["seed"],
        threads: 1
        resources:
            **plan.nn_job_resources(_design, len(_keys), _group),
        log:
            f"{LOGS}/{_group[0]}/unlearn_{_chunk}.log",
        benchmark:
            f"{BENCH}/{_group[0]}/unlearn_{_chunk}.tsv"
        conda:
            NN_ENV
        script:
            "../scripts/nn_unlearn.py"


rule nn_fit:
    """Per-example in/out Gaussians from calibration runs only (Algorithm 2, step 7)."""
    input:
        scores=plan.nn_calibration_scores,
    output:
        plan.experiment_file("{experiment}", "fit.parquet"),
    params:
        fit=config["nn"]["fit"],
    wildcard_constraints:
        experiment=plan.nn_experiment_pattern("batchwise"),
    resources:
        **plan.nn_step_resources(minutes=15),
    log:
        f"{LOGS}/{{experiment}}/fit.log",
    conda:
        CPU_ENV
    script:
        "../scripts/nn_fit.py"


rule nn_audit:
    """Guesses, overlaps for every r and Theorem 4.2 bounds from evaluation runs only; the
    pre-registered cell (report_r, statistic, score) is marked, the others are exploratory."""
    input:
        fit=rules.nn_fit.output[0],
        scores=plan.nn_evaluation_scores,
        signs=plan.nn_experiment_signs,
    output:
        overlaps=plan.experiment_file("{experiment}", "overlaps.parquet"),
        bounds=plan.experiment_file("{experiment}", "bounds.parquet"),
    params:
        m=plan.nn_audit_m,
        cell=plan.nn_audit_cell,
        zeta=config["zeta"],
    wildcard_constraints:
        experiment=plan.nn_experiment_pattern("batchwise"),
    log:
        f"{LOGS}/{{experiment}}/audit.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_audit.py"


rule nn_table:
    """Paper Tables 1a, 1b, 3, 4, 5, 7 from the bounds and run metrics of their experiments; a bound
    equal to its cell's perfect-prediction ceiling is marked (at_ceiling in the CSV, ‡ in .md/.tex)."""
    input:
        bounds=plan.nn_table_bounds,
        metrics=plan.nn_table_metrics,
    output:
        report(
            plan.table_stem("{table}") + ".csv",
            caption="../report/nn_table.rst",
            category="Neural-network audits",
            subcategory=plan.report_table_subcategory,
        ),
        multiext(plan.table_stem("{table}"), ".md", ".tex"),
    params:
        experiments=plan.nn_table_summaries,
    wildcard_constraints:
        table=catalogue.pattern(catalogue.NN_TABLES),
    log:
        f"{LOGS}/tables/{{table}}.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_table.py"


rule nn_figure_r:
    """Figure: epsilon_LB against r, one panel per (dataset, split), one line per experiment, the
    perfect-prediction ceiling of each (m, L) dashed; the plotted numbers as CSV beside it."""
    input:
        bounds=[plan.experiment_file(e, "bounds.parquet") for e in plan.nn_experiments_audited_by("batchwise")],
    output:
        report(
            plan.figure_stem("nn_epsilon_vs_r") + ".png",
            caption="../report/nn_epsilon_vs_r.rst",
            category="Neural-network audits",
            subcategory="Figure: lower bound vs r",
        ),
        multiext(plan.figure_stem("nn_epsilon_vs_r"), ".pdf", ".csv"),
    params:
        experiments={e: plan.nn_experiment_summary(e) for e in plan.nn_experiments_audited_by("batchwise")},
    log:
        f"{LOGS}/figures/nn_epsilon_vs_r.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_figure_r.py"
