"""Rewind-to-delete of K runs at once (App. G.2): the full-batch steps and Lipschitz probes of K
runs as stacked weights by vmap (r2d_descent_many, unlearn_variants_many) equal the loop's
(r2d_descent, unlearn_variants) within rounding, every run with its own base model, forget set and
generators, and a run does not depend on which runs share its batch."""

from __future__ import annotations

import copy

import pytest
import torch

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.unlearning import Monitor, make_params, unlearn_variants, unlearn_variants_many
from unlearn_audit.unlearning.rewind_to_delete import r2d_descent, r2d_descent_many
from synthetic_images import quadrant_images

PARAMS = {"in_channels": 1, "num_classes": 4, "width": 0.25}
R2D = {"T": 6, "K": 3, "lr": 0.05, "epsilon": 1.0, "delta": 1e-3, "lipschitz_samples": 4, "micro_batch": 40}
TOL = 1e-5


class Recorder(Monitor):
    def __init__(self) -> None:
        self.values: dict = {}

    def record(self, **values) -> None:
        self.values.update(values)


def _models(k: int) -> list[torch.nn.Module]:
    out = []
    for seed in range(k):
        m = build_model("tinynet", **PARAMS)
        m.load_state_dict(initial_model("tinynet", PARAMS, seed))
        out.append(m)
    return out


def _flat(m: torch.nn.Module) -> torch.Tensor:
    return torch.cat([v.reshape(-1).double() for v in m.state_dict().values()])


def _forgets(k: int):
    return [quadrant_images(4 + 2 * j, 10 + j) for j in range(k)]


def test_the_stacked_descent_is_the_loops_for_every_run():
    retain, models, forgets = quadrant_images(96, 0), _models(3), _forgets(3)
    p = make_params("rewind_to_delete", R2D)
    loop = [copy.deepcopy(m) for m in models]
    expected = [r2d_descent(m, retain, f, p, torch.Generator().manual_seed(20 + j)) for j, (m, f) in enumerate(zip(loop, forgets))]
    stacked = [copy.deepcopy(m) for m in models]
    got = r2d_descent_many(stacked, retain, forgets, p, [torch.Generator().manual_seed(20 + j) for j in range(3)])
    for e, g, a, b in zip(expected, got, loop, stacked):
        assert (g["n"], g["m_f"]) == (e["n"], e["m_f"])
        assert g["G"] == pytest.approx(e["G"], rel=TOL) and g["L"] == pytest.approx(e["L"], rel=1e-4)
        assert float((_flat(a) - _flat(b)).abs().max()) < TOL
    # each run moved, from its own start, and its probes came from its own generator
    assert float((_flat(stacked[0]) - _flat(models[0])).abs().max()) > 1e-3
    assert len({round(s["L"], 6) for s in got}) == 3


def test_the_batched_variants_are_the_loops_and_do_not_depend_on_the_batch():
    retain, models, forgets = quadrant_images(96, 0), _models(3), _forgets(3)
    other = {**R2D, "epsilon": 50.0}

    def variants(j):
        return [(R2D, torch.Generator().manual_seed(100 + j), Recorder()), (other, torch.Generator().manual_seed(200 + j), Recorder())]

    prepare = lambda j: torch.Generator().manual_seed(300 + j)  # noqa: E731
    loop = [unlearn_variants("rewind_to_delete", m, retain, f, variants(j), prepare(j)) for j, (m, f) in enumerate(zip(models, forgets))]
    together = unlearn_variants_many("rewind_to_delete", models, retain, forgets, [variants(j) for j in range(3)],
                                     [prepare(j) for j in range(3)], group_size=4)
    alone = unlearn_variants_many("rewind_to_delete", models[2:], retain, forgets[2:], [variants(2)], [prepare(2)], group_size=4)
    for a, b in zip(loop, together):
        for x, y in zip(a, b):
            assert float((_flat(x) - _flat(y)).abs().max()) < 1e-4  # the release noise is the same draw; σ within rounding
    for x, y in zip(together[2], alone[0]):
        assert torch.equal(_flat(x), _flat(y))  # padded to 4: the same whichever runs share the batch
    assert all(torch.equal(_flat(m), _flat(n)) for m, n in zip(models, _models(3)))  # the inputs are not modified


def test_runs_with_other_parameters_are_refused():
    retain, models, forgets = quadrant_images(32, 0), _models(2), _forgets(2)
    runs = [[(R2D, torch.Generator(), None)], [({**R2D, "K": 2}, torch.Generator(), None)]]
    with pytest.raises(ValueError, match="every run's variants"):
        unlearn_variants_many("rewind_to_delete", models, retain, forgets, runs, [torch.Generator(), torch.Generator()])
    with pytest.raises(ValueError, match="one each per run"):
        r2d_descent_many(models, retain, forgets[:1], make_params("rewind_to_delete", R2D), [torch.Generator()] * 2)
