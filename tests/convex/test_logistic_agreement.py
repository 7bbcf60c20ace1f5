"""The two logistic ERMs of the project are one objective (docs/calibrations.md §12): the convex
audits' per-example-regularised loss (App. H.4.2, ``convex.losses.LogisticLoss``, labels s = 2y − 1)
and the Gaussian-unlearning GLM with its regulariser counted once (``gaussian_unlearning.glm``)
agree in value, gradient, Hessian and minimiser when λ_GLM·ν = λ_convex·n.  Each keeps its own
arithmetic (and so the bytes of its outputs); this test keeps them the same function."""

from __future__ import annotations

import numpy as np
import pytest

from unlearn_audit.convex.losses import ConvexData, LogisticLoss as ConvexLogistic
from unlearn_audit.gaussian_unlearning.glm import RegularizedGLM, fit_newton, get_loss


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_convex_and_glm_logistic_objectives_and_minimisers_agree(seed):
    rng = np.random.default_rng(seed)
    n, d, lam = 60, 4, 0.05
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ rng.normal(size=d) * 3))).astype(float)
    convex = ConvexLogistic.for_data(lam, ConvexData(X, y))
    data = ConvexData(X, y)
    glm = RegularizedGLM(X, y, get_loss("logistic"), lam=lam * n / 2, nu=2.0)
    for w in rng.normal(size=(5, d)):
        assert convex.value(w, data) == pytest.approx(glm.objective(w), rel=1e-12)
        np.testing.assert_allclose(convex.grad(w, data), glm.gradient(w), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(convex.hessian(w, data), glm.hessian(w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(convex.erm(data), fit_newton(glm).beta, rtol=1e-8, atol=1e-10)
