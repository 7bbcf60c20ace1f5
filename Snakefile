# The workflow is workflow/Snakefile, the layout Snakemake and its workflow catalog expect; this file
# keeps `snakemake` in the repository root and `snakemake -s <checkout>/Snakefile` working as before.
# It is `include: "workflow/Snakefile"` (the directive is this call) keeping that file's default
# target, rule all, as Snakemake does for a main Snakefile: the directive alone would drop it, and
# `snakemake` without a target would then do nothing.
workflow.include("workflow/Snakefile", overwrite_default_target=True)
