"""Seed 2's m-slopes: the unclipped log-loss is the primary result and the clipped losses a
labelled sensitivity analysis with a figure of its own (gaussian_unlearning.experiments.clip_sensitivity,
pipeline.gaussian_unlearning.clip_figure); every clip comes from the same fits and noise draws."""

import numpy as np
import pandas as pd

from unlearn_audit.gaussian_unlearning.experiments import PRIMARY, SENSITIVITY, clip_sensitivity, loglog_slopes, slopes_table
from unlearn_audit.pipeline import gaussian_unlearning as gu

MODEL = {"n_removal_sets": 1, "n_test": 60, "n_noise_draws": 3}
SPEC = {"p": [40], "m": [2, 4, 8], "epsilon": 0.75, "replications": 2, "prob_clip": [None, 1e-3, 1e-6]}


def test_clip_sensitivity_fits_one_slope_per_noise_and_clip_on_the_same_draws(tmp_path):
    raw = gu.run_cell("ged_vs_m", 40, SPEC, MODEL, 3)
    table = clip_sensitivity(raw, "ged")
    assert len(table) == 2 * 3  # two noises x three accuracy losses, at one p
    for noise, sub in table.groupby("noise"):
        assert np.isnan(sub.prob_clip.iloc[0]) and sub.prob_clip.iloc[1:].tolist() == [1e-6, 1e-3]  # unclipped first, then c rising
        # the unclipped row is the fit of the unclipped records alone (same fits, other loss)
        alone = raw[(raw.noise == noise) & raw.prob_clip.isna()]
        assert np.isclose(sub.slope.iloc[0], loglog_slopes(alone, "m", "ged", ("noise",))[0]["slope"])
    # the slopes table labels the clipped rows as the sensitivity analysis, after the primary rows
    slopes = slopes_table({"ged_vs_m": raw})
    assert set(slopes.analysis) == {PRIMARY, SENSITIVITY}
    assert (slopes.analysis == PRIMARY).to_numpy().argmin() == (slopes.analysis == PRIMARY).sum()  # primary rows lead
    assert (slopes.loc[slopes.analysis == PRIMARY, "error_loss"] == "logistic (unclipped)").all()
    # the figures: the GED-vs-m figure shows the primary loss only, the clip figure every clip
    path = tmp_path / "ged_vs_m.parquet"
    raw.to_parquet(path)
    gu.figure("ged_vs_m", "ged", path, tmp_path / "ged_vs_m.png")
    assert set(pd.read_csv(tmp_path / "ged_vs_m.csv").error_loss) == {"logistic (unclipped)"}
    gu.clip_figure("ged", path, tmp_path / "clip.png")
    plotted = pd.read_csv(tmp_path / "clip.csv")
    assert len(plotted) == 6 and (tmp_path / "clip.png").stat().st_size > 5000 and (tmp_path / "clip.pdf").exists()
    assert gu.has_clip_sweep(SPEC) and not gu.has_clip_sweep({"prob_clip": [None]})
