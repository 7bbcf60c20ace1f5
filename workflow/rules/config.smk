# The configuration the results were computed from: <results_dir>/config.yaml, the merged config
# with the schema's defaults filled in (unlearn_audit.pipeline.config.result_config).
from unlearn_audit.pipeline.config import result_config


rule config_snapshot:
    """<results_dir>/config.yaml: the configuration the results depend on, defaults filled in."""
    output:
        f"{RESULTS}/config.yaml",
    params:
        config=result_config(config),
    log:
        f"{LOGS}/config_snapshot.log",
    localrule: True
    conda:
        CPU_ENV
    script:
        "../scripts/config_snapshot.py"
