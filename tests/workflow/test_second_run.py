"""Two runs of the same entries give the same bytes: the second run (.test/slurm.yaml, in another
folder, through SLURM where one answers) against the shared run (.test/all.yaml).

.test/slurm.yaml is a part of .test/all.yaml, entry for entry, so every file it makes is a file of
the shared run: the text audit's chain (data, signs, CharLSTM base models, unlearning, fit, audit,
Table 1a), the cubic-Newton convex audits with Table 2a, the App. F ceilings.  The figures that draw every
nn experiment or every convex mechanism of a run in one plot hold fewer of them in the second run;
their CSVs must hold the same rows for the experiments and mechanisms it has.
"""

from __future__ import annotations

import pandas as pd

from workflow_utils import load_config, output_hashes, small_config

#: Figures that draw every nn experiment (or convex mechanism) of the run: the CSV column naming it,
#: and whether the figure is of the nn experiments or the convex mechanisms (a convex audit's
#: subject is "<mechanism>:<epsilon>").
ALL_SUBJECT_FIGURES = {
    "figures/nn_epsilon_vs_r": ("experiment", "nn"),
    "figures/tradeoff_sign_vector": ("subject", "nn"),
    "figures/convex_epsilon_lb": ("mechanism", "convex"),
    "figures/tradeoff_convex": ("subject", "convex"),
}
#: Columns of those CSVs that number the panels (they depend on how many subjects there are).
PANEL_COLUMNS = ("panel",)
#: The entries where .test/slurm.yaml differs from .test/all.yaml.
OWN_ENTRIES = {("results_dir",), ("gaussian_unlearning", "enabled"), ("convex", "mechanisms", "output_perturbation", "enabled")}


def _leaves(tree, path=()):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, tree


def _at(tree, path):
    """The entry of ``tree`` at ``path``, or None where it has none."""
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def test_the_second_runs_config_is_a_part_of_the_shared_runs():
    part, whole = load_config(small_config("slurm")), load_config(small_config("all"))
    differ = [path for path, value in _leaves(part) if path not in OWN_ENTRIES and _at(whole, path) != value]
    assert not differ, f".test/slurm.yaml differs from .test/all.yaml at {differ}"
    assert part["gaussian_unlearning"] == {"enabled": False} and part["nn"]["experiments"].keys() == {"plays_ft"}
    assert part["convex"]["mechanisms"]["output_perturbation"]["enabled"] is False


def test_the_second_run_gives_the_shared_runs_bytes(second_run, shared_run):
    a, b = output_hashes(shared_run.results), output_hashes(second_run.results)
    for needed in ("tables/table1a.csv", "tables/table2a.csv", "tables/attainable_bounds.csv",
                   "figures/convex_epsilon_lb.csv", "figures/tradeoff_convex.csv",
                   "plays_ft/bounds.parquet", "designs/plays/base/calib9-15_eval0-1/eval/0.pt"):
        assert needed in b, sorted(b)
    assert sum(p.endswith(".parquet") for p in b) >= 10
    assert set(b) <= set(a), sorted(set(b) - set(a))

    # config.yaml, provenance.json (its config_sha256) and the report's header describe each run's own config
    compared = {p for p in b if p not in ("config.yaml", "provenance.json", "report_metadata.yaml") and p.rsplit(".", 1)[0] not in ALL_SUBJECT_FIGURES}
    differ = sorted(p for p in compared if a[p] != b[p])
    assert not differ, f"outputs differ between two runs of the same entries: {differ}"
    assert len(compared) >= 70, len(compared)

    cfg = load_config(second_run.workdir / "config.yaml")
    subjects = {"nn": set(cfg["nn"]["experiments"]),
                "convex": {name for name, mech in cfg["convex"]["mechanisms"].items() if mech.get("enabled", True)}}
    assert subjects == {"nn": {"plays_ft"}, "convex": {"cubic_newton"}}
    for figure, (column, section) in ALL_SUBJECT_FIGURES.items():
        mine = pd.read_csv(second_run.results / f"{figure}.csv").drop(columns=list(PANEL_COLUMNS), errors="ignore")
        theirs = pd.read_csv(shared_run.results / f"{figure}.csv").drop(columns=list(PANEL_COLUMNS), errors="ignore")
        names = mine[column].astype(str).str.split(":").str[0]
        assert set(names) == subjects[section], (figure, set(names))
        theirs = theirs[theirs[column].astype(str).str.split(":").str[0].isin(subjects[section])].reset_index(drop=True)
        assert len(theirs) < len(pd.read_csv(shared_run.results / f"{figure}.csv")), figure
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), theirs, check_exact=True)

