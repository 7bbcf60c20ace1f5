"""Power of the perfect-guess count against the mean tests on two kinds of ε-LDP leakage
(docs/bounds.md §4a), side by side on the same simulated audits.

Run: `python benchmarks/perfect_count.py [--audits 200]`.  At m = r = 6, L = 100 and true ε = 1 it
simulates Algorithm 1 against k-ary randomized response (all leakage in V = r) and against the
exponential mechanism with Hamming utility (leakage spread over the coordinates), and prints for each
test the mean ε_LDP over the audits, the fraction of audits that reject ε = 0, and the fraction whose
ε_LDP exceeds the truth (the type-I error, ≤ ζ).  "adaptive mean + perfect (ζ/2 each)" is the
pre-registrable pair: the larger of the two bounds, each at ζ/2 (Bonferroni; they are different
statistics).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from unlearn_audit import epsilon_lower_bound
from unlearn_audit.stats.simulation import hamming_exponential_overlaps, randomized_response_overlaps

M = R = 6
L = 100
EPSILON = 1.0
ZETA = 0.05
TESTS = {
    "exact mean": lambda v: epsilon_lower_bound(v, M, R, zeta=ZETA, method="exact").epsilon_ldp,
    "adaptive mean": lambda v: epsilon_lower_bound(v, M, R, zeta=ZETA, method="adaptive").epsilon_ldp,
    "exact median": lambda v: epsilon_lower_bound(v, M, R, zeta=ZETA, statistic="median", method="exact").epsilon_ldp,
    "perfect count": lambda v: epsilon_lower_bound(v, M, R, zeta=ZETA, statistic="perfect", method="exact").epsilon_ldp,
    "adaptive mean + perfect (zeta/2 each)": lambda v: max(
        epsilon_lower_bound(v, M, R, zeta=ZETA / 2, method="adaptive").epsilon_ldp,
        epsilon_lower_bound(v, M, R, zeta=ZETA / 2, statistic="perfect", method="exact").epsilon_ldp),
}
MECHANISMS = {"randomized response": randomized_response_overlaps, "Hamming exponential": hamming_exponential_overlaps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=200)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"m = r = {M}, L = {L}, true epsilon_LDP = {EPSILON}, zeta = {ZETA}, {args.audits} audits per mechanism")
    print(f"{'mechanism':<22}{'test':<40}{'mean eps_LDP':>13}{'rejects 0':>11}{'eps_LDP > truth':>17}")
    for name, mechanism in MECHANISMS.items():
        overlaps = mechanism(M, R, EPSILON, args.audits * L, np.random.default_rng(0)).reshape(args.audits, L)
        print(f"{name:<22}{'(mean V; runs with V = r)':<40}{overlaps.mean():>13.3f}{np.mean(overlaps == R):>11.3f}")
        for test, bound in TESTS.items():
            eps = np.array([bound(v) for v in overlaps])
            print(f"{'':<22}{test:<40}{eps.mean():>13.3f}{np.mean(eps > 0):>11.3f}{np.mean(eps > EPSILON):>17.3f}")
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
