"""Table 7's divergence, recomputed from a finished run: how much final Gaussian noise the digits
base models tolerate before their test accuracy falls (App. G.4, Table 7).

    python analysis/noise_accuracy.py [RESULTS_DIR] [--design digits_uniform] [--models 5] [--draws 3]

For the first ``--models`` evaluation base models of the design (``results/designs/<design>/base/
<chunk>/eval/<run>.pt``) it adds N(0, σ² I) to every parameter, as the Hessian method's final release does
(``hessian`` with ``sigma``), for σ in 1e-3, 5e-3, 1e-2 (Table 7's three) and 2e-2, 5e-2, and
prints the mean test accuracy over ``--draws`` noise draws, the relative noise σ√d / ‖θ‖ and the
median test margin φ (the logit score) of the noiseless models.  The paper's TinyNet at width 1
has d = 273,828 parameters against 16,890 here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
import yaml

from unlearn_audit.data import load_audit_data
from unlearn_audit.models import build_model
from unlearn_audit.pipeline.plan.paths import finished_base_models
from unlearn_audit.scores import model_scores

SIGMAS = (1e-3, 5e-3, 1e-2, 2e-2, 5e-2)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--design", default="digits_uniform")
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--draws", type=int, default=3)
    args = ap.parse_args(argv[1:])
    results = Path(args.results)
    paths = finished_base_models(results, args.design, "eval")[: args.models]
    if not paths:
        print(f"error: {results}/designs/{args.design}/base/*/eval/*.pt not found: give the results directory of a finished run with design {args.design}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    config = yaml.safe_load((results / "config.yaml").read_text())
    model_cfg = config["nn"]["designs"][args.design]["model"]
    data = load_audit_data(results / "designs" / args.design / "data.npz")
    gen = torch.Generator().manual_seed(0)
    margins, base_acc, rows = [], [], {s: [] for s in SIGMAS}
    d = norm = None
    for path in paths:
        path = path if path.is_absolute() or path.exists() else results.parent / path
        model = build_model(model_cfg["name"], **model_cfg.get("params", {}))
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
        params = [p.detach().clone() for p in model.parameters()]
        d = sum(p.numel() for p in params)
        norm = float(torch.sqrt(sum((p ** 2).sum() for p in params)))
        sc = model_scores(model, data.test_x, data.test_y, kind=data.kind)
        margins.append(sc["logit"])
        base_acc.append(float(np.mean(sc["correct"])))
        for sigma in SIGMAS:
            for _ in range(args.draws):
                with torch.no_grad():
                    for p, p0 in zip(model.parameters(), params):
                        p.copy_(p0 + sigma * torch.randn(p0.shape, generator=gen))
                rows[sigma].append(float(np.mean(model_scores(model, data.test_x, data.test_y, kind=data.kind)["correct"])))
    phi = np.concatenate(margins)
    print(f"{args.design}: {len(paths)} evaluation base models, d = {d} parameters, ||theta|| = {norm:.1f} (last model)")
    print(f"noiseless test accuracy {np.mean(base_acc):.3f}; median test margin phi {np.median(phi):.2f}, "
          f"fraction with phi >= 4: {np.mean(phi >= 4):.2f}")
    print(f"{'sigma':>7s} {'test acc':>8s} {'sigma*sqrt(d)/||theta||':>24s}")
    for sigma in SIGMAS:
        print(f"{sigma:7.0e} {np.mean(rows[sigma]):8.3f} {sigma * np.sqrt(d) / norm:24.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
