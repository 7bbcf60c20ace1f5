# unlearn-audit: reproduces "Auditing of Unlearning Algorithms" and the Gaussian
# certified-unlearning experiments.  Run `snakemake --cores all` (default config) or
# `snakemake --cores all --configfile config/paper.yaml` (paper scale).
import sys
from pathlib import Path

from snakemake.utils import min_version

from unlearn_audit.config import ConfigError, validate_config

min_version("9.0")


configfile: "config/config.yaml"


try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as error:
    sys.exit(f"Error: {error}")


include: "workflow/rules/common.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/convex.smk"
include: "workflow/rules/gaussian_unlearning.smk"
include: "workflow/rules/nn.smk"


rule all:
    input:
        all_targets(),
    default_target: True
