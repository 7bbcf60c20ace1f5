"""Rule config_snapshot -> unlearn_audit.pipeline.config.config_snapshot."""

import sys

from unlearn_audit.pipeline.config import config_snapshot

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
config_snapshot(dict(snakemake.params.config), snakemake.output[0])  # noqa: F821
