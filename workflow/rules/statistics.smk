# Tables and figures that are computed from the statistics alone.


rule attainable_bounds:
    """App. F.1/F.3: the largest epsilon bound that perfect predictions can certify."""
    output:
        report(
            plan.files.table_stem("attainable_bounds") + ".csv",
            caption="../report/attainable_bounds.rst",
            category="Statistics (App. F)",
            subcategory="Attainable bounds (App. F.1, F.3)",
            labels=plan.report.labels("table", "Attainable bounds (App. F.1, F.3)"),
        ),
        multiext(plan.files.table_stem("attainable_bounds"), ".md", ".tex"),
    log:
        f"{LOGS}/attainable_bounds.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        grid=config["perfect_prediction"]["grid"],
        L=config["perfect_prediction"]["L"],
        zeta=config["zeta"],
    script:
        "../scripts/attainable_bounds.py"
