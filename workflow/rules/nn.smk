# Neural-network audits (paper Sections 5-7): data -> signs -> base training (one model per
# sign vector, shared by all experiments of a design) -> unlearning + scores (per experiment)
# -> calibration fits -> overlaps and bounds -> tables and figures.
#
# Training and unlearning process a chunk of runs per job (Python and torch start-up cost more
# than a small model's training).  A chunk is `chunk_size` runs of the calibration-then-evaluation
# order (fewer where the cost model prices that many above cluster.walltime_minutes), so it may
# hold runs of both phases; its job writes one folder named by its runs (calib0-29_eval0-9, eval7,
# candidate0-19) with one file per run, so one wildcard rule per step makes every chunk
# (pipeline.plan.paths.chunk_name; plan.nn.design_chunks and plan.nn.experiment_chunks list them).  On
# a cluster a chunk is one job asking for one GPU at most: chunks, not Snakemake group jobs, bundle
# runs, since a chunk pays process start-up, torch import, CUDA context and data load once for all
# its runs.  A chunk's name is part of its outputs' paths, so a changed `chunk_size` reruns the
# chunks (results do not depend on it: every run has its own seed streams).


rule nn_prepare_data:
    """Dataset split of a design: retain set, m candidate forget batches of size B, val/test."""
    output:
        data=plan.files.design_file("{design}", "data.npz"),
        split=plan.files.design_file("{design}", "split.parquet"),
    log:
        f"{LOGS}/nn/{{design}}/prepare_data.log",
    localrule: plan.resources.cpu_jobs_local()  # cluster.cpu_jobs: local runs it on the submitting host
    conda:
        CPU_ENV
    resources:
        **plan.resources.step_resources(minutes=30),
    params:
        cfg=plan.nn.data_params,
        seed=plan.nn.seed_of_design,
    script:
        "../scripts/nn_prepare_data.py"


rule nn_sample_signs:
    """Every sign vector of a design, calibration and evaluation phases from disjoint streams."""
    output:
        plan.files.design_file("{design}", "signs.parquet"),
    log:
        f"{LOGS}/nn/{{design}}/signs.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        cfg=plan.nn.signs_params,
        seed=plan.nn.seed_of_design,
    script:
        "../scripts/nn_sample_signs.py"


rule nn_train:
    """Base models A(D(S)) of one chunk of a design's runs (a joint design: of its candidates S̃),
    each from the design's fixed x0 and order pi."""
    input:
        data=plan.files.design_file("{design}", "data.npz"),
        signs=plan.files.design_file("{design}", "signs.parquet"),
    output:
        directory(plan.files.base_chunk_dir("{design}", "{chunk}")),
    log:
        f"{LOGS}/nn/{{design}}/train_{{chunk}}.log",
    benchmark:
        f"{BENCH}/nn/{{design}}/train_{{chunk}}.tsv"
    wildcard_constraints:
        chunk=CHUNK,
    conda:
        NN_ENV
    threads: 1
    resources:
        **plan.resources.train_resources(),
    params:
        job=plan.nn.train_job,
        seed=plan.nn.seed_of_design,
    script:
        "../scripts/nn_train.py"


use rule nn_train as nn_train_retrain with:
    output:
        plan.files.retrain_model("{design}"),
    log:
        f"{LOGS}/nn/{{design}}/train_retrain.log",
    benchmark:
        f"{BENCH}/nn/{{design}}/train_retrain.tsv"
    wildcard_constraints:
        design=plan.nn.retrain_designs_pattern(),


# A group is one experiment, or the experiments of one design whose hyperparameters differ only in
# the final noise release (e.g. Table 7's sigma): they share each run's noiseless unlearning and
# each draws its own release noise (unlearn_audit.unlearning.unlearn_variants).  A group is named by
# its first experiment, and its chunk folders hold every experiment's runs.
rule nn_unlearn:
    """Unlearn one chunk of a group's runs and score the candidate forget pool."""
    input:
        unpack(plan.nn.unlearn_inputs),
    output:
        directory(plan.files.unlearn_chunk_dir("{group}", "{chunk}")),
    log:
        f"{LOGS}/{{group}}/unlearn_{{chunk}}.log",
    benchmark:
        f"{BENCH}/{{group}}/unlearn_{{chunk}}.tsv"
    wildcard_constraints:
        group=plan.nn.group_pattern(),
        chunk=CHUNK,
    conda:
        NN_ENV
    threads: 1
    resources:
        **plan.resources.unlearn_resources(),
    params:
        job=plan.nn.unlearn_job,
        seed=plan.nn.seed_of_group,
    script:
        "../scripts/nn_unlearn.py"


rule nn_fit:
    """Per-example in/out Gaussians from calibration runs only (Algorithm 2, step 7)."""
    input:
        plan.nn.calibration_dirs,
    output:
        plan.files.experiment_file("{experiment}", "fit.parquet"),
    log:
        f"{LOGS}/{{experiment}}/fit.log",
    wildcard_constraints:
        experiment=plan.nn.experiment_pattern("batchwise"),
    localrule: plan.resources.cpu_jobs_local()  # cluster.cpu_jobs: local runs it on the submitting host
    conda:
        CPU_ENV
    resources:
        **plan.resources.step_resources(minutes=15),
    params:
        scores=plan.nn.calibration_scores,
        fit=config["nn"]["fit"],
    script:
        "../scripts/nn_fit.py"


rule nn_audit:
    """Guesses, overlaps for every r and bounds from evaluation runs only; the pre-registered cell
    (report_r, statistic, score, test) is marked, the others are exploratory.  With report_r:
    calibrated its r is chosen first by leave-one-out on the calibration runs alone."""
    input:
        fit=rules.nn_fit.output[0],
        runs=plan.nn.evaluation_dirs,
        calibration=plan.nn.audit_calibration_dirs,
        signs=plan.nn.experiment_signs,
    output:
        overlaps=plan.files.experiment_file("{experiment}", "overlaps.parquet"),
        bounds=plan.files.experiment_file("{experiment}", "bounds.parquet"),
    log:
        f"{LOGS}/{{experiment}}/audit.log",
    wildcard_constraints:
        experiment=plan.nn.experiment_pattern("batchwise"),
    localrule: True
    conda:
        CPU_ENV
    params:
        scores=plan.nn.evaluation_scores,
        calib_scores=plan.nn.audit_calibration_scores,
        m=plan.nn.audit_m,
        cell=plan.nn.audit_cell,
        fit=config["nn"]["fit"],
        zeta=config["zeta"],
    script:
        "../scripts/nn_audit.py"


rule nn_membership:
    """The membership metrics researchers quote (AUC, TPR at 1 % and 0.1 % FPR, each with a bootstrap
    interval over evaluation runs), from the same scores the audit reads: the threshold and the score's
    orientation from calibration runs, the rates from evaluation runs (docs/metrics.md)."""
    input:
        fit=rules.nn_fit.output[0],
        calibration=plan.nn.calibration_dirs,
        runs=plan.nn.evaluation_dirs,
    output:
        plan.files.experiment_file("{experiment}", "membership.parquet"),
    log:
        f"{LOGS}/{{experiment}}/membership.log",
    wildcard_constraints:
        experiment=plan.nn.experiment_pattern("batchwise"),
    localrule: True
    conda:
        CPU_ENV
    params:
        calib_scores=plan.nn.calibration_scores,
        scores=plan.nn.evaluation_scores,
    script:
        "../scripts/nn_membership.py"


rule nn_checkpoint_audit:
    """Algorithm 2 at every checkpoint step of a batchwise experiment (the algorithm stopped at step t:
    App. F.4's first noisy step), each step fitted on the calibration runs' scores at that step."""
    input:
        runs=plan.certified.all_dirs,
        signs=plan.nn.experiment_signs,
    output:
        plan.files.experiment_file("{experiment}", "checkpoint_bounds.parquet"),
    log:
        f"{LOGS}/{{experiment}}/checkpoint_audit.log",
    wildcard_constraints:
        experiment=plan.nn.checkpointed_pattern("batchwise"),
    localrule: True
    conda:
        CPU_ENV
    params:
        checkpoints=plan.certified.all_checkpoint_scores,
        m=plan.nn.audit_m,
        cell=plan.nn.audit_cell,
        fit=config["nn"]["fit"],
        zeta=config["zeta"],
    script:
        "../scripts/nn_checkpoint_audit.py"


rule nn_table:
    """Paper Tables 1a, 1b, 3, 4, 5, 7 from the bounds, overlaps and run metrics of their experiments,
    each row's claim first; a bound equal to its own test's perfect-prediction ceiling is marked
    (at_ceiling_claim, at_ceiling_theorem42 in the CSV, ‡ in .md/.tex)."""
    input:
        bounds=plan.nn.table_bounds,
        overlaps=plan.nn.table_overlaps,
        membership=plan.nn.table_membership,
        checkpoint_bounds=plan.nn.table_checkpoint_bounds,
        runs=plan.nn.table_metric_dirs,
    output:
        report(
            plan.files.table_stem("{table}") + ".csv",
            caption="../report/nn_table.rst",
            category="Neural-network audits",
            subcategory=plan.report.table_subcategory,
            labels=plan.report.labels("table", plan.report.table_subcategory),
        ),
        multiext(plan.files.table_stem("{table}"), ".md", ".tex"),
    log:
        f"{LOGS}/tables/{{table}}.log",
    wildcard_constraints:
        table=catalogue.pattern(catalogue.NN_TABLES),
    localrule: True
    conda:
        CPU_ENV
    params:
        metrics=plan.nn.table_metrics,
        experiments=plan.nn.table_summaries,
        retrain_controls=plan.nn.table_retrain_controls,
    script:
        "../scripts/nn_table.py"


rule nn_figure_r:
    """Figure: each experiment's claim (its pre-registered test's epsilon_LB) against r, one panel per
    (dataset, split), one line per experiment, the claim's perfect-prediction ceiling of each (m, L)
    dashed; the plotted numbers, Theorem 4.2's beside them, with each experiment's accuracies and
    flags, as CSV beside it."""
    input:
        bounds=[plan.files.experiment_file(e, "bounds.parquet") for e in plan.nn.experiments_audited_by("batchwise")],
        runs=plan.nn.evaluation_dirs_of(plan.nn.experiments_audited_by("batchwise")),
    output:
        report(
            plan.files.figure_stem("nn_epsilon_vs_r") + ".png",
            caption="../report/nn_epsilon_vs_r.rst",
            category="Neural-network audits",
            subcategory="Figure: lower bound vs r",
            labels=plan.report.labels("figure", "Lower bound vs r"),
        ),
        multiext(plan.files.figure_stem("nn_epsilon_vs_r"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/nn_epsilon_vs_r.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        experiments={e: plan.nn.experiment_summary(e) for e in plan.nn.experiments_audited_by("batchwise")},
        metrics=plan.nn.evaluation_metrics_of(plan.nn.experiments_audited_by("batchwise")),
    script:
        "../scripts/nn_figure_r.py"


rule nn_summary_figure:
    """The findings at a glance, drawn from the tables' CSVs: the finding (forget accuracy against
    Retrain's beside the claim's share of its own ceiling, per method and split) and the audit size
    (the claim against m at a fixed share of right guesses); the plotted numbers as CSV beside each."""
    input:
        unpack(plan.nn.summary_figure_tables),
    output:
        report(
            plan.files.figure_stem("{figure}") + ".png",
            caption="../report/summary_figure.rst",
            category="Neural-network audits",
            subcategory=plan.report.summary_subcategory,
            labels=plan.report.labels("figure", plan.report.summary_subcategory),
        ),
        multiext(plan.files.figure_stem("{figure}"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/{{figure}}.log",
    wildcard_constraints:
        figure=catalogue.pattern(catalogue.SUMMARY_FIGURES),
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/nn_summary_figure.py"
