# unlearn-audit: reproduces "Auditing of Unlearning Algorithms" and the Gaussian
# certified-unlearning experiments.  `snakemake --cores all` runs the default config;
# `snakemake --cores all --configfile config/paper.yaml` runs the paper's scale.  A config file
# given on the command line stands alone (the default is not merged under it); to merge, name
# both: `--configfile config/config.yaml my_overrides.yaml`.
import sys
from pathlib import Path

from snakemake.utils import min_version

from unlearn_audit.pipeline.config import ConfigError, check_config_files, config_summary, validate_config
from unlearn_audit.pipeline.runtime import local_gpu_jobs_problem

min_version("9.0")

# This Snakefile's folder (workflow.basedir is the main Snakefile's: another one when this workflow
# is used as a module, `module unlearn_audit: snakefile: ".../Snakefile"`).
WORKFLOW_DIR = Path(workflow.current_basedir)


if not workflow.overwrite_configfiles:

    configfile: WORKFLOW_DIR / "config" / "config.yaml"


CONFIG_FILES = list(workflow.overwrite_configfiles) or [WORKFLOW_DIR / "config" / "config.yaml"]
try:
    check_config_files(CONFIG_FILES)  # a key given twice: Snakemake's reader keeps the last silently
    validate_config(config, WORKFLOW_DIR / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as error:
    sys.exit(f"Error: {error}")
# a local run (no cluster executor, not a job of one) lets no more GPU jobs run at once than GPU slots
if workflow.nodes is None and not workflow.remote_exec and not workflow.subprocess_exec:
    problem = local_gpu_jobs_problem(workflow.global_resources.get("gpu").value, config["device"])
    if problem:
        sys.exit(f"Error: {problem}")
print(config_summary(config, CONFIG_FILES), file=sys.stderr)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/config.smk"
include: "workflow/rules/statistics.smk"
include: "workflow/rules/convex.smk"
include: "workflow/rules/gaussian_unlearning.smk"
include: "workflow/rules/nn.smk"
include: "workflow/rules/certified.smk"
include: "workflow/rules/tradeoff.smk"


rule all:
    input:
        plan.all_targets(),
        rules.config_snapshot.output,
    default_target: True
