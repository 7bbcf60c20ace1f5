# The mu-GDP trade-off figures (docs/bounds.md §8): for each audit with a mu lower bound, the
# trade-off curve of its claim beside the curve G_{mu_LB} that the audit proves; one figure per
# audit family, each with the numbers it plots as CSV.  The panels are chosen by
# unlearn_audit.pipeline.plan.tradeoff and drawn by unlearn_audit.pipeline.tradeoff.
from unlearn_audit.pipeline.plan import tradeoff as tradeoff_plan


rule tradeoff_convex:
    """Convex audits (Table 2): one panel per selected (mechanism, epsilon) cell."""
    input:
        tradeoff_plan.convex_inputs(plan),
    output:
        report(
            plan.figure_stem("tradeoff_convex") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Convex audits (Table 2)",
            labels=plan.report_labels("figure", "Trade-off curves: convex audits (Table 2)"),
        ),
        multiext(plan.figure_stem("tradeoff_convex"), ".pdf", ".csv"),
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
        tradeoff_plan.gaussian_unlearning_inputs(plan),
    output:
        report(
            plan.figure_stem("tradeoff_gaussian_unlearning") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Gaussian certified unlearning",
            labels=plan.report_labels("figure", "Trade-off curves: Gaussian certified unlearning"),
        ),
        multiext(plan.figure_stem("tradeoff_gaussian_unlearning"), ".pdf", ".csv"),
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
        tradeoff_plan.sign_vector_inputs(plan),
    output:
        report(
            plan.figure_stem("tradeoff_sign_vector") + ".png",
            caption="../report/tradeoff.rst",
            category="Trade-off curves (mu-GDP)",
            subcategory="Sign-vector audits",
            labels=plan.report_labels("figure", "Trade-off curves: sign-vector audits"),
        ),
        multiext(plan.figure_stem("tradeoff_sign_vector"), ".pdf", ".csv"),
    log:
        f"{LOGS}/figures/tradeoff_sign_vector.log",
    localrule: True
    conda:
        CPU_ENV
    params:
        family="sign_vector",
        experiments=tradeoff_plan.sign_vector_summaries(plan),
        zeta=config["zeta"],
    script:
        "../scripts/tradeoff_sign_vector.py"
