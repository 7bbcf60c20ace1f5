# Gaussian certified unlearning in high dimensions (docs/calibrations.md §12–13): GED/UED vs p, vs epsilon and
# vs m for Gaussian and l2-Laplace noise (each grid at one or more n/p and accuracy losses), a
# GED and a UED figure per grid, their log-log slopes, and an audit of the mechanism.


rule gaussian_unlearning_cell:
    """All replications of one experiment at one p (ged_vs_eps: its one p, every epsilon on shared draws)."""
    output:
        plan.files.gaussian_unlearning_cell("{gu_experiment}", "{x}"),
    log:
        f"{LOGS}/gaussian_unlearning/{{gu_experiment}}/{{x}}.log",
    benchmark:
        f"{BENCH}/gaussian_unlearning/{{gu_experiment}}/{{x}}.tsv"
    localrule: plan.resources.cpu_jobs_local()  # cluster.cpu_jobs: local runs it on the submitting host
    conda:
        CPU_ENV
    threads: 1
    resources:
        **plan.resources.cpu_job_resources(mem_mb=4000, runtime=60),
    params:
        spec=plan.gaussian_unlearning.spec,
        model=config["gaussian_unlearning"]["model"],
        seed=config["seed"],
    script:
        "../scripts/gaussian_unlearning_cell.py"


rule gaussian_unlearning_gather:
    """Raw per-replication results of one experiment (every grid cell), one file."""
    input:
        plan.gaussian_unlearning.cells,
    output:
        raw=plan.files.gaussian_unlearning_file("{gu_experiment}.parquet"),
    log:
        f"{LOGS}/gaussian_unlearning/{{gu_experiment}}_gather.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/gaussian_unlearning_gather.py"


rule gaussian_unlearning_figure:
    """Mean GED or UED of one experiment against its grid (with the plotted numbers as CSV)."""
    input:
        plan.files.gaussian_unlearning_file("ged_vs_{gu_axis}.parquet"),
    output:
        figure=report(
            plan.files.figure_stem("gaussian_unlearning_{gu_error}_vs_{gu_axis}") + ".png",
            caption="../report/gaussian_unlearning_figure.rst",
            category="Gaussian certified unlearning",
            subcategory=plan.report.gaussian_unlearning_subcategory,
            labels=plan.report.labels("figure", plan.report.gaussian_unlearning_subcategory),
        ),
        other=multiext(plan.files.figure_stem("gaussian_unlearning_{gu_error}_vs_{gu_axis}"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/gaussian_unlearning_{{gu_error}}_vs_{{gu_axis}}.log",
    wildcard_constraints:
        gu_error="ged|ued",
        gu_axis="|".join(spec.axis for spec in catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS.values()),
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/gaussian_unlearning_figure.py"


rule gaussian_unlearning_clip_figure:
    """Sensitivity of the GED/UED-vs-m slope to the clip c of the accuracy loss (seed 2's m-slopes)."""
    input:
        plan.files.gaussian_unlearning_file("ged_vs_m.parquet"),
    output:
        figure=report(
            plan.files.figure_stem("gaussian_unlearning_{gu_error}_m_slope_vs_clip") + ".png",
            caption="../report/gaussian_unlearning_clip_figure.rst",
            category="Gaussian certified unlearning",
            subcategory=plan.report.clip_subcategory,
            labels=plan.report.labels("figure", plan.report.clip_subcategory),
        ),
        other=multiext(plan.files.figure_stem("gaussian_unlearning_{gu_error}_m_slope_vs_clip"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/gaussian_unlearning_{{gu_error}}_m_slope_vs_clip.log",
    wildcard_constraints:
        gu_error="ged|ued",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/gaussian_unlearning_clip_figure.py"


rule gaussian_unlearning_slopes:
    """Fitted log-log slopes with standard errors for every experiment."""
    input:
        [plan.files.gaussian_unlearning_file(f"{e}.parquet") for e in GAUSSIAN_UNLEARNING_EXPERIMENTS],
    output:
        report(
            plan.files.table_stem("gaussian_unlearning_slopes") + ".csv",
            caption="../report/gaussian_unlearning_slopes.rst",
            category="Gaussian certified unlearning",
            subcategory="Table: GED and UED slopes",
            labels=plan.report.labels("table", "GED and UED slopes"),
        ),
        multiext(plan.files.table_stem("gaussian_unlearning_slopes"), ".md", ".tex"),
    log:
        f"{LOGS}/tables/gaussian_unlearning_slopes.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/gaussian_unlearning_slopes.py"


rule gaussian_unlearning_audit:
    """Audit of one-step Newton + Gaussian noise, with two positive controls."""
    output:
        report(
            plan.files.table_stem("gaussian_unlearning_audit") + ".csv",
            caption="../report/gaussian_unlearning_audit.rst",
            category="Gaussian certified unlearning",
            subcategory="Table: audit with positive controls",
            labels=plan.report.labels("table", "Audit with positive controls"),
        ),
        multiext(plan.files.table_stem("gaussian_unlearning_audit"), ".md", ".tex"),
        raw=plan.files.gaussian_unlearning_file("audit.parquet"),
    log:
        f"{LOGS}/gaussian_unlearning/audit.log",
    localrule: plan.resources.cpu_jobs_local()  # cluster.cpu_jobs: local runs it on the submitting host
    conda:
        CPU_ENV
    threads: 1
    resources:
        **plan.resources.cpu_job_resources(mem_mb=4000, runtime=30),
    params:
        spec=config["gaussian_unlearning"]["audit"],
        model=config["gaussian_unlearning"]["model"],
        seed=config["seed"],
        zeta=config["zeta"],
    script:
        "../scripts/gaussian_unlearning_audit.py"
