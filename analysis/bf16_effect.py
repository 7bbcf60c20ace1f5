"""The effect of ``precision: bf16`` on a reduced run: the default's digits_uniform design (Table 1b,
uniform split) in fp32 and in bf16 autocast, its pre-registered bounds and accuracies side by side.

    # the fp32 run: any finished default run (results/); the bf16 run of the same design:
    snakemake results_bf16/config.yaml results_bf16/digits_uniform_{no_unlearning,retrain,retain_finetune,forget_ascent,ida_q1,hessian_s1e3}/bounds.parquet \\
        --cores all --configfile config/config.yaml analysis/bf16_effect.yaml
    python analysis/bf16_effect.py results results_bf16

``analysis/bf16_effect.yaml`` sets ``results_dir: results_bf16`` and the design's ``precision: bf16``
(bf16 autocast of the training and unlearning steps; weights, optimiser state and scores stay fp32);
everything else, seeds included, is the default's, so the two runs differ in their arithmetic only.
Torch-free; reads what :func:`divergences.experiment_rows` reads.  The numbers the README and
``config/paper.yaml`` quote are in ``analysis/bf16_effect.out.txt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from divergences import experiment_rows  # noqa: E402

COLUMNS = ["epsilon_lb_claim", "epsilon_lb_theorem42", "epsilon_lb_exact", "guess_fraction", "forget_acc", "test_acc", "gap", "d_prime"]


def side_by_side(fp32: Path, bf16: Path) -> pd.DataFrame:
    """One row per experiment of the bf16 run, each column in fp32 and in bf16."""
    low = experiment_rows(bf16).set_index("experiment")
    high = experiment_rows(fp32).set_index("experiment").loc[low.index]
    out = pd.DataFrame({"method": low.method, "r": low.r})
    for c in COLUMNS:
        out[f"{c}_fp32"], out[f"{c}_bf16"] = high[c], low[c]
    return out


def main() -> None:
    fp32 = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    bf16 = Path(sys.argv[2] if len(sys.argv) > 2 else "results_bf16")
    table = side_by_side(fp32, bf16)
    with pd.option_context("display.width", 250, "display.max_columns", None, "display.float_format", "{:.3f}".format):
        print(f"# {fp32} (fp32) against {bf16} (bf16 autocast): pre-registered cell: the claim (its pre-registered test), Theorem 4.2, the exact test")
        print(table.to_string())


if __name__ == "__main__":
    main()
