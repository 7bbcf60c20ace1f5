# What a run's results were computed from: <results_dir>/config.yaml, the merged config with the
# schema's defaults filled in (unlearn_audit.pipeline.config.result_config), and
# <results_dir>/provenance.json, the checkout, software and devices that computed them
# (unlearn_audit.pipeline.provenance).
from unlearn_audit.pipeline.config import result_config


rule config_snapshot:
    """<results_dir>/config.yaml: the configuration the results depend on, defaults filled in."""
    output:
        f"{RESULTS}/config.yaml",
    log:
        f"{LOGS}/config_snapshot.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        config=result_config(config),
    script:
        "../scripts/config_snapshot.py"


rule provenance:
    """<results_dir>/provenance.json: git commit and state of the workflow's checkout, package versions,
    CPU kernels and devices, and the config's hash (docs/schemas.md#provenance); and from it the
    report's header, <results_dir>/report_metadata.yaml (snakemake --report-metadata).  Only rule all asks
    for it; its inputs are every table and figure, so it is written again whenever any of them is."""
    input:
        plan.all_targets(),
        rules.config_snapshot.output,
    output:
        record=report(
            f"{RESULTS}/provenance.json",
            caption="../report/provenance.rst",
            category="Provenance",
            subcategory="Checkout, software and devices",
            labels=plan.report.labels("record", "Checkout, software and devices"),
        ),
        header=f"{RESULTS}/report_metadata.yaml",
    log:
        f"{LOGS}/provenance.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        config=result_config(config),
        checkout=str(REPO_DIR),
    script:
        "../scripts/provenance.py"
