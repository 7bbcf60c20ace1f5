# The mu-GDP trade-off figures (docs/bounds.md §8): for each audit with a mu lower bound, the
# trade-off curve of its claim beside the curve G_{mu_LB} that the audit proves; one figure per
# audit family, each with the numbers it plots as CSV.  The panels are chosen by
# unlearn_audit.pipeline.plan.tradeoff and drawn by unlearn_audit.pipeline.tradeoff.
from unlearn_audit.pipeline.plan import tradeoff as tradeoff_plan


rule tradeoff_convex:
    """Convex audits (Table 2): one panel per selected (mechanism, epsilon) cell."""
    input:
        plan.tradeoff.convex_inputs(),
    output:
        report(
            plan.files.figure_stem("tradeoff_convex") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Convex audits (Table 2)",
            labels=plan.report.labels("figure", "Trade-off curves: convex audits (Table 2)"),
        ),
        multiext(plan.files.figure_stem("tradeoff_convex"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/tradeoff_convex.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        family="convex",
    script:
        "../scripts/tradeoff_convex.py"


rule tradeoff_gaussian_unlearning:
    """Gaussian certified unlearning: the certified mechanism and its two positive controls."""
    input:
        plan.tradeoff.gaussian_unlearning_inputs(),
    output:
        report(
            plan.files.figure_stem("tradeoff_gaussian_unlearning") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Gaussian certified unlearning",
            labels=plan.report.labels("figure", "Trade-off curves: Gaussian certified unlearning"),
        ),
        multiext(plan.files.figure_stem("tradeoff_gaussian_unlearning"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/tradeoff_gaussian_unlearning.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        family="gaussian_unlearning",
    script:
        "../scripts/tradeoff_gaussian_unlearning.py"


rule tradeoff_sign_vector:
    """Sign-vector audits (Algorithms 2 and 3): one panel per experiment, its reported cell."""
    input:
        plan.tradeoff.sign_vector_inputs(),
    output:
        report(
            plan.files.figure_stem("tradeoff_sign_vector") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Sign-vector audits",
            labels=plan.report.labels("figure", "Trade-off curves: sign-vector audits"),
        ),
        multiext(plan.files.figure_stem("tradeoff_sign_vector"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/tradeoff_sign_vector.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        family="sign_vector",
        experiments=plan.tradeoff.sign_vector_summaries(),
        zeta=config["zeta"],
    script:
        "../scripts/tradeoff_sign_vector.py"
