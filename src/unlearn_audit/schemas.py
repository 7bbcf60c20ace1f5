"""Parquet schemas of every intermediate file, in one place (docs/schemas.md#parquet-schemas)."""

from __future__ import annotations

import pyarrow as pa

from .catalogue import SCORE_NAMES, score_column

__all__ = [
    "SIGNS", "SCORES", "CHECKPOINT_SCORES", "RUN_METRICS", "FIT", "OVERLAPS", "BOUNDS", "CHECKPOINT_BOUNDS", "PAIRWISE",
    "CONVEX_DECISIONS", "CONVEX_SUMMARY", "MEMBERSHIP", "QA_RUN_METRICS",
]

SIGNS = pa.schema(
    [
        ("design", pa.string()),
        ("phase", pa.string()),        # "calib" or "eval"
        ("run", pa.int32()),
        ("sign_index", pa.int64()),    # row of this sign vector in this file (never a file name)
        ("seed", pa.uint64()),         # first word of the run's sign-stream state
        ("signs", pa.list_(pa.int8())),  # S ∈ S_m, entry j = +1 puts batch j in the forget set
    ]
)

SCORES = pa.schema(
    [
        ("experiment", pa.string()),
        ("phase", pa.string()),
        ("run", pa.int32()),
        ("sign_index", pa.int64()),
        ("seed", pa.uint64()),
        ("batch", pa.int32()),         # candidate batch j
        ("example", pa.int64()),       # global id of the example in the candidate pool
        ("in_forget", pa.bool_()),     # S_j = +1
    ]
    # one float column per membership score, score_<name> (catalogue.SCORE_NAMES): score_logit
    # φ = log p_y − log(1 − p_y) (text: −mean CE), score_loss the cross-entropy (text: mean per-character CE)
    + [(score_column(name), pa.float64()) for name in SCORE_NAMES]
)

RUN_METRICS = pa.schema(
    [
        ("experiment", pa.string()),
        ("phase", pa.string()),
        ("run", pa.int32()),
        ("retain_acc", pa.float64()),   # evaluation runs; NaN for calibration runs (not measured)
        ("forget_acc", pa.float64()),   # accuracy on D_f(S), the sampled forget set
        ("test_acc", pa.float64()),     # evaluation runs; NaN for calibration runs (not measured)
        ("n_test", pa.int64()),         # test examples (windows, for text) behind test_acc
        ("n_forget", pa.int64()),       # examples in D_f(S) behind forget_acc
        ("chance_acc", pa.float64()),   # 1 / number of classes (characters): a guessing model's accuracy
        ("record", pa.string()),        # JSON: what the algorithm reports (noisy steps, σ, L̂, Ĝ, ...); "{}" if nothing
        ("precision", pa.string()),     # the design's precision, "fp32" or "bf16", of base training and unlearning
        ("compiled", pa.bool_()),       # whether the model's forward was torch.compile'd
        ("deterministic", pa.bool_()),  # whether the steps ran with deterministic kernels
    ]
)

#: The sets of pairs an evaluation run of a question-answer design measures (its forget pairs D_f(S),
#: a fixed sample of retain pairs, the held-out test entities' pairs) and the TOFU metrics it
#: records of each (docs/metrics.md, :mod:`unlearn_audit.auditors.qa_metrics`).
QA_PARTS = ("forget", "retain", "test")
QA_PART_METRICS = ("answer_prob", "rouge_l", "truth_ratio")

#: RUN_METRICS of a question-answer design (``dataset: qa``): its columns, then each part's answer
#: probability, ROUGE-L recall and truth ratio (forget: the mean R; retain, test: the mean
#: max(0, 1 − R)), TOFU's model utility, the retain sample's mean answer loss (nats a token), the
#: vocabulary's size and the forget pairs' truth ratios (for forget quality); NaN, 0 and [] in a
#: calibration run.  Other designs keep RUN_METRICS.
QA_RUN_METRICS = pa.schema(
    list(zip(RUN_METRICS.names, RUN_METRICS.types))
    + [(f"{part}_{metric}", pa.float64()) for part in QA_PARTS for metric in QA_PART_METRICS]
    + [("model_utility", pa.float64()), ("answer_loss", pa.float64()), ("vocab_size", pa.int64()),
       ("forget_truth_ratios", pa.list_(pa.float64()))]
)

#: The question-answer columns of the table ``llm_qa`` beside a reported row (docs/metrics.md): the
#: evaluation runs' means of QA_RUN_METRICS's, forget quality (the KS test against the design's
#: Retrain), the ``damaged`` flag and ``no_retrain`` (no Retrain control to measure against).
QA_COLUMNS = (*(f"{part}_{metric}" for part in QA_PARTS for metric in QA_PART_METRICS), "forget_quality", "model_utility",
              "answer_loss", "damaged", "no_retrain")

FIT = pa.schema(
    [
        ("experiment", pa.string()),
        ("score", pa.string()),        # "logit" or "loss"
        ("example", pa.int64()),
        ("batch", pa.int32()),
        ("mu_in", pa.float64()),
        ("sd_in", pa.float64()),
        ("n_in", pa.int32()),
        ("mu_out", pa.float64()),
        ("sd_out", pa.float64()),
        ("n_out", pa.int32()),
    ]
)

OVERLAPS = pa.schema(
    [
        ("experiment", pa.string()),
        ("auditor", pa.string()),
        ("score", pa.string()),
        ("run", pa.int32()),
        ("sign_index", pa.int64()),
        ("m", pa.int32()),
        ("r", pa.int32()),
        ("overlap", pa.int32()),
    ]
)

BOUNDS = pa.schema(
    [
        ("experiment", pa.string()),
        ("auditor", pa.string()),
        ("score", pa.string()),
        ("statistic", pa.string()),
        ("m", pa.int32()),
        ("r", pa.int32()),
        ("L", pa.int32()),
        ("zeta", pa.float64()),
        ("delta", pa.float64()),
        ("mean_overlap", pa.float64()),
        ("epsilon_ldp", pa.float64()),
        ("epsilon_lb", pa.float64()),
        ("rejected", pa.bool_()),
        ("selection", pa.string()),    # "preregistered" or "bonferroni" (unlearn_audit.stats.selection)
        ("role", pa.string()),         # preregistered | exploratory (or selected | candidate under Bonferroni)
        ("test", pa.string()),         # the pre-registered test: theorem4.2 | exact | mgf | adaptive (unlearn_audit.stats.selection)
        ("epsilon_ldp_exact", pa.float64()),  # the exact convolution test (docs/bounds.md); NaN when delta > 0
        ("epsilon_lb_exact", pa.float64()),
        ("epsilon_ldp_test", pa.float64()),   # this row's bound under the pre-registered `test`: the claim
        ("epsilon_lb_test", pa.float64()),
        ("mu_ldp", pa.float64()),      # mu-GDP lower bound of the induced mechanism (docs/bounds.md §6)
        ("mu_lb", pa.float64()),       # ... of a mu-GDP unlearning claim (the trade-off test, §6a)
        ("r_rule", pa.string()),       # how the pre-registered r was fixed: "config", or "calibrated" (leave-one-out on calibration runs)
    ]
)

#: BOUNDS ``role`` of the row an experiment reports, its one level-ζ claim: the pre-registered cell,
#: or under Bonferroni the selected one (the other rows are ``exploratory`` or ``candidate``).  A
#: constant beside its schema, so not in ``__all__`` (the list of schemas).
REPORTED_ROLES = ("preregistered", "selected")

#: The boolean flags every neural-network table and figure CSV carries beside an audited model set
#: (docs/workflow.md, "Accuracies and flags"): its models are at chance, the method left them where
#: No unlearning has them, the design's audit has no power (its No-unlearning control is not rejected),
#: the method's forget accuracy tells it apart from Retrain's (it does not look unlearned).
DIAGNOSTIC_FLAGS = ("at_chance", "no_op", "no_power", "not_forgotten")
#: The flags of a checkpoint step's models (the algorithm stopped at that step): those of
#: ``DIAGNOSTIC_FLAGS`` a step has of its own (no power is its design's).
STEP_FLAGS = ("at_chance", "no_op", "not_forgotten")

#: The scale-free readings of a reported cell's overlaps the neural-network tables print beside its ε
#: (:mod:`unlearn_audit.stats.guesses`; README, "Reading a table"): the mean fraction of right guesses
#: V / r over the evaluation runs, its 95 % t-interval, and Theorem 4.2's bound of the same fractions
#: at the paper's audit size (an extrapolation, :data:`unlearn_audit.catalogue.PAPER_AUDIT_SIZES`).
GUESS_COLUMNS = ("guess_fraction", "guess_fraction_low", "guess_fraction_high", "epsilon_lb_theorem42_at_paper_size")

#: The membership metrics of an experiment's scores, one row per score (docs/metrics.md,
#: :mod:`unlearn_audit.auditors.membership_metrics`): AUC of the oriented raw score and of the audit's
#: per-example likelihood ratio, TPR at 1 % and 0.1 % FPR (threshold on calibration runs), each with
#: its 95 % bootstrap interval over evaluation runs, and the bootstrap draws of the AUC (for privleak's interval).
MEMBERSHIP = pa.schema(
    [("experiment", pa.string()), ("score", pa.string())]
    + [(name, pa.float64()) for name in ("auc", "auc_low", "auc_high", "auc_lr", "auc_lr_low", "auc_lr_high")]
    + [item for label in ("1pct", "0.1pct") for item in
       [(f"tpr_at_{label}_fpr{end}", pa.float64()) for end in ("", "_low", "_high")] + [(f"few_negatives_{label}", pa.bool_())]]
    + [(name, pa.int64()) for name in ("n_positive", "n_negative", "n_calibration_negative", "evaluation_runs")]
    + [("auc_draws", pa.list_(pa.float64()))]
)

#: The membership columns every neural-network table carries beside a reported row (docs/metrics.md):
#: the AUC, TPR at 1 % FPR and privleak against the design's Retrain, each with its interval.
MEMBERSHIP_COLUMNS = ("auc", "auc_low", "auc_high", "auc_lr", "tpr_at_1pct_fpr", "tpr_at_1pct_fpr_low", "tpr_at_1pct_fpr_high",
                      "tpr_at_0.1pct_fpr", "few_negatives_0.1pct", "privleak", "privleak_low", "privleak_high")

#: Scores of the model at noisy step ``step`` of a run (model clipping, Figure 1a): the audit of the
#: algorithm as if it had stopped at that step, without rerunning the trajectory per step.
CHECKPOINT_SCORES = pa.schema([("step", pa.int32())] + list(zip(SCORES.names, SCORES.types)))

#: Bounds of the checkpoint audits, one set per step.
CHECKPOINT_BOUNDS = pa.schema([("step", pa.int32())] + list(zip(BOUNDS.names, BOUNDS.types))
                              # the row's claim at ζ/K for the K checkpoint steps (Bonferroni over steps)
                              + [("epsilon_lb_bonferroni_steps", pa.float64())])

#: The pairwise baseline (App. A.3): one row per score.
PAIRWISE = pa.schema(
    [
        ("experiment", pa.string()),
        ("auditor", pa.string()),      # "pairwise"
        ("score", pa.string()),
        ("fp", pa.int64()),
        ("n_neg", pa.int64()),
        ("fn", pa.int64()),
        ("n_pos", pa.int64()),
        ("zeta", pa.float64()),
        ("delta", pa.float64()),
        ("epsilon_lb", pa.float64()),  # Eq. 3 at the certified δ, for the unlearning algorithm (halved)
        ("mu_lb", pa.float64()),       # μ-GDP lower bound, halved
        ("epsilon_lb_reference", pa.float64()),  # the m = 2 overlap form: the reference test of the same guesses (docs/bounds.md §6b)
        ("test", pa.string()),         # the pre-registered claim: "eq3" or "reference"
        ("epsilon_lb_test", pa.float64()),  # the claim's bound
    ]
)

CONVEX_DECISIONS = pa.schema(
    [
        ("mechanism", pa.string()),
        ("epsilon", pa.float64()),
        ("sigma", pa.float64()),
        ("draw", pa.int64()),
        ("truth", pa.int8()),          # 1: drawn from the non-empty-forget-set side, 0: empty forget set
        ("decision", pa.int8()),
    ]
)

CONVEX_SUMMARY = pa.schema(
    [("mechanism", pa.string())]
    + [(name, pa.float64()) for name in ("epsilon", "delta", "sigma", "sensitivity", "distance", "rho", "true_mu")]
    + [(name, pa.int64()) for name in ("n_calibration", "n_test_draws", "fp", "n_neg", "fn", "n_pos")]
    + [(name, pa.float64()) for name in ("accuracy", "zeta", "pairwise_delta", "joint_delta", "epsilon_lb_pairwise",
                                         "epsilon_lb_joint", "mu_lb", "mu_lb_accuracy")]
)
