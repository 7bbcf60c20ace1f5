"""ε_LB of Theorem 4.2 vs the "exact" and "mgf" tests, and μ_LB, on three reference cases; and the
time of each method at m = 4500, r = 3000, L = 10 (docs/bounds.md).

Run: `python benchmarks/bounds_methods.py`.  ε_ldp bounds the induced LDP mechanism
(ε_lb = ε_ldp / 2 the unlearning algorithm); μ_ldp the induced mechanism's μ-GDP (μ_lb = μ_ldp / 2).
"""

from __future__ import annotations

import time

from unlearn_audit import epsilon_lower_bound, mu_lower_bound

CASES = [
    ("m=6 r=6 L=100 mean=4", 6, 6, [4] * 100),
    ("m=100 r=60 L=10 all 60", 100, 60, [60] * 10),
    ("m=4500 r=3000 L=10 mean=1985.5", 4500, 3000, [1985] * 5 + [1986] * 5),
]
METHODS = [("theorem4.2", "mean"), ("exact", "mean"), ("mgf", "mean"), ("theorem4.2", "median"), ("exact", "median")]
REPEATS = 5


def best_time(fn) -> float:
    fn()  # warm the (m, r) caches
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    cols = [f"{meth}/{stat}" for meth, stat in METHODS]
    print(f"{'case':<32}" + "".join(f"{c:>18}" for c in cols) + f"{'mu_ldp/mean':>14}{'mu_ldp/median':>15}")
    for name, m, r, ov in CASES:
        row = [epsilon_lower_bound(ov, m, r, statistic=stat, method=meth).epsilon_ldp for meth, stat in METHODS]
        mus = [mu_lower_bound(ov, m, r, statistic=stat).mu_ldp for stat in ("mean", "median")]
        print(f"{name:<32}" + "".join(f"{x:>18.6f}" for x in row) + f"{mus[0]:>14.6f}{mus[1]:>15.6f}")
    print("(epsilon_ldp of the induced LDP mechanism; epsilon_lb = epsilon_ldp / 2; mu_lb = mu_ldp / 2)")
    print()
    name, m, r, ov = CASES[2]
    print(f"time per call at {name} (best of {REPEATS}, warm caches):")
    for meth, stat in METHODS:
        t = best_time(lambda stat=stat, meth=meth: epsilon_lower_bound(ov, m, r, statistic=stat, method=meth))
        print(f"  epsilon_lower_bound method={meth:<10} statistic={stat:<6} {t * 1e3:9.2f} ms")
    for stat in ("mean", "median"):
        t = best_time(lambda stat=stat: mu_lower_bound(ov, m, r, statistic=stat))
        print(f"  mu_lower_bound                        statistic={stat:<6} {t * 1e3:9.2f} ms")


if __name__ == "__main__":
    main()
