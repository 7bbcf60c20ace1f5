# Certified unlearning audits (paper §7.1, App. A.3, A.4, F.4, G.1, G.2): joint designs (one base
# model per candidate S̃, Γ calibration runs per candidate, L evaluation runs with fresh S) share the
# data, sign, training and unlearning rules of nn.smk; here are their audits, Table 6 and Figures 1a-c.


rule certified_joint_audit:
    """Algorithm 3 (r = m) on the final models and, for model clipping, at every checkpoint step."""
    input:
        runs=plan.certified.all_dirs,
        signs=plan.nn.experiment_signs,
    output:
        overlaps=plan.files.experiment_file("{experiment}", "overlaps.parquet"),
        bounds=plan.files.experiment_file("{experiment}", "bounds.parquet"),
        checkpoint_bounds=plan.files.experiment_file("{experiment}", "checkpoint_bounds.parquet"),
    log:
        f"{LOGS}/{{experiment}}/joint_audit.log",
    wildcard_constraints:
        experiment=plan.nn.experiment_pattern("joint"),
    localrule: True
    conda:
        CPU_ENV
    params:
        scores=plan.certified.all_scores,
        checkpoints=plan.certified.all_checkpoint_scores,
        m=plan.nn.audit_m,
        cell=plan.certified.cell,
        zeta=config["zeta"],
    script:
        "../scripts/certified_joint_audit.py"


rule certified_pairwise_audit:
    """The pairwise baseline (App. A.3): FP/FN counts, Eq. 3 at the certified delta, mu-GDP."""
    input:
        runs=plan.certified.all_dirs,
        signs=plan.nn.experiment_signs,
    output:
        plan.files.experiment_file("{experiment}", "pairwise.parquet"),
    log:
        f"{LOGS}/{{experiment}}/pairwise_audit.log",
    wildcard_constraints:
        experiment=plan.nn.experiment_pattern("pairwise"),
    localrule: True
    conda:
        CPU_ENV
    params:
        scores=plan.certified.all_scores,
        cell=plan.certified.cell,
        zeta=config["zeta"],
    script:
        "../scripts/certified_pairwise_audit.py"


rule certified_table6:
    """Table 6: model clipping on the certified grid (noisy steps, first-step and final bounds)."""
    input:
        unpack(plan.certified.table_inputs),
    output:
        report(
            plan.files.table_stem("{table}") + ".csv",
            caption="../report/certified_table6.rst",
            category="Certified unlearning audits",
            subcategory="Table 6",
            labels=plan.report.labels("table", "Table 6"),
        ),
        multiext(plan.files.table_stem("{table}"), ".md", ".tex"),
    log:
        f"{LOGS}/tables/{{table}}.log",
    wildcard_constraints:
        table="table6",
    localrule: True
    conda:
        CPU_ENV
    params:
        metrics=plan.nn.table_metrics,
        experiments=plan.certified.table_summaries,
    script:
        "../scripts/certified_table6.py"


rule certified_pairwise_table:
    """Sec. 7.3: the pairwise auditor on the uncertified methods (error counts, Eq. 3, its ceiling)."""
    input:
        unpack(plan.certified.pairwise_table_inputs),
    output:
        report(
            plan.files.table_stem("{table}") + ".csv",
            caption="../report/certified_pairwise_table.rst",
            category="Certified unlearning audits",
            subcategory="Sec. 7.3: pairwise auditor",
            labels=plan.report.labels("table", "Sec. 7.3: pairwise auditor"),
        ),
        multiext(plan.files.table_stem("{table}"), ".md", ".tex"),
    log:
        f"{LOGS}/tables/{{table}}.log",
    wildcard_constraints:
        table="pairwise_uncertified",
    localrule: True
    conda:
        CPU_ENV
    params:
        metrics=plan.nn.table_metrics,
        experiments=plan.certified.table_summaries,
    script:
        "../scripts/certified_pairwise_table.py"


rule certified_figure:
    """Figures 1a-c (with the plotted numbers as CSV)."""
    input:
        unpack(plan.certified.figure_inputs),
    output:
        report(
            plan.files.figure_stem("{figure}") + ".png",
            caption="../report/certified_figure.rst",
            category="Certified unlearning audits",
            subcategory=plan.report.figure_subcategory,
            labels=plan.report.labels("figure", plan.report.figure_subcategory),
        ),
        multiext(plan.files.figure_stem("{figure}"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/{{figure}}.log",
    wildcard_constraints:
        figure=catalogue.pattern(catalogue.CERTIFIED_FIGURES),
    localrule: True
    conda:
        CPU_ENV
    params:
        metrics=plan.certified.figure_metrics,
        experiments=plan.certified.figure_summaries,
    script:
        "../scripts/certified_figure.py"
