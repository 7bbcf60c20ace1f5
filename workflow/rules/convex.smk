# Convex audits (paper Section 8, App. H and I; Table 2): one job per (mechanism, epsilon)
# writes the per-draw decisions and a summary row; a gather rule renders each table.


rule convex_audit:
    """Weight-space audit (App. H.1) of one mechanism certified at one epsilon."""
    output:
        decisions=plan.files.convex_file("{mechanism}", "{epsilon}", "decisions.parquet"),
        summary=plan.files.convex_file("{mechanism}", "{epsilon}", "summary.parquet"),
    log:
        f"{LOGS}/convex/{{mechanism}}/eps_{{epsilon}}.log",
    benchmark:
        f"{BENCH}/convex/{{mechanism}}/eps_{{epsilon}}.tsv"
    localrule: plan.resources.cpu_jobs_local()  # cluster.cpu_jobs: local runs it on the submitting host
    conda:
        CPU_ENV
    threads: 1
    resources:
        **plan.resources.cpu_job_resources(mem_mb=1500, runtime=10),
    params:
        params=plan.convex.mechanism_params,
        settings=config["convex"]["settings"],
        zeta=config["zeta"],
        seed=config["seed"],
    script:
        "../scripts/convex_audit.py"


rule convex_table:
    """Table 2a/2b (and the logistic-loss table): one row per certified epsilon."""
    input:
        plan.convex.table_summaries,
    output:
        report(
            plan.files.table_stem("{table}") + ".csv",
            caption="../report/convex_table.rst",
            category="Convex audits (Table 2)",
            subcategory=plan.report.convex_subcategory,
            labels=plan.report.labels("table", plan.report.convex_subcategory),
        ),
        multiext(plan.files.table_stem("{table}"), ".md", ".tex"),
        details=report(
            plan.convex.details_file("{table}"),
            caption="../report/convex_details.rst",
            category="Convex audits (Table 2)",
            subcategory=plan.report.convex_subcategory,
            labels=plan.report.labels("table", plan.report.convex_subcategory, ": every number behind it"),
        ),
    log:
        f"{LOGS}/tables/{{table}}.log",
    wildcard_constraints:
        table="table2[a-z]",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/convex_table.py"


rule convex_figure:
    """Figure: epsilon_LB against the certified epsilon, with the diagonal."""
    input:
        plan.convex.all_summaries(),
    output:
        report(
            plan.files.figure_stem("convex_epsilon_lb") + ".png",
            caption="../report/convex_figure.rst",
            category="Convex audits (Table 2)",
            subcategory="Figure: lower bound vs certified epsilon",
            labels=plan.report.labels("figure", "Lower bound vs certified epsilon"),
        ),
        multiext(plan.files.figure_stem("convex_epsilon_lb"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/convex_epsilon_lb.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/convex_figure.py"


rule convex_sweep:
    """App. H.4: Lemma 3's ratio rho over each sweep's grid, the chosen point the largest."""
    output:
        report(
            plan.files.table_stem("appendix_h4") + ".csv",
            caption="../report/convex_sweep.rst",
            category="Convex audits (Table 2)",
            subcategory="App. H.4: parameter sweeps",
            labels=plan.report.labels("table", "App. H.4: parameter sweeps"),
        ),
        multiext(plan.files.table_stem("appendix_h4"), ".md", ".tex"),
    log:
        f"{LOGS}/tables/appendix_h4.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        sweep=plan.convex.sweep_params(),
    script:
        "../scripts/convex_sweep.py"
