"""ε_LB of Theorem 4.2 vs the "exact", "mgf" and "adaptive" tests, and μ_LB, on three reference cases;
the time of each method at m = 4500, r = 3000, L = 10; and the time of one p-value and of one ε solve
of "exact", "mgf" and "adaptive" side by side on six (m, r, L) (docs/bounds.md).

Run: `python benchmarks/bounds_methods.py`.  ε_ldp bounds the induced LDP mechanism
(ε_lb = ε_ldp / 2 the unlearning algorithm); μ_ldp the induced mechanism's μ-GDP and μ_lb the
unlearning claim's, by Lemma C.1 (μ_lb = μ_ldp / 2) and by the trade-off function (docs/bounds.md §6a),
side by side with their times.
"""

from __future__ import annotations

import time

from unlearn_audit import epsilon_lower_bound, mu_lower_bound
from unlearn_audit.stats.posterior_tests import posterior_log_p_value

CASES = [
    ("m=6 r=6 L=100 mean=4", 6, 6, [4] * 100),
    ("m=100 r=60 L=10 all 60", 100, 60, [60] * 10),
    ("m=4500 r=3000 L=10 mean=1985.5", 4500, 3000, [1985] * 5 + [1986] * 5),
]
METHODS = [("theorem4.2", "mean"), ("exact", "mean"), ("mgf", "mean"), ("adaptive", "mean"), ("theorem4.2", "median"),
           ("exact", "median")]
REPEATS = 5
MEAN_METHODS = ("exact", "mgf", "adaptive")
TIMING_CASES = [
    ("m=6 r=6 L=30 all 4", 6, 6, [4] * 30),
    ("m=6 r=6 L=100 all 4", 6, 6, [4] * 100),
    ("m=6 r=6 L=500 all 4", 6, 6, [4] * 500),
    ("m=8 r=6 L=25 all 4", 8, 6, [4] * 25),
    ("m=100 r=60 L=10 mean=55", 100, 60, [50, 52, 55, 58, 60] * 2),
    ("m=4500 r=3000 L=10 mean=1985.5", 4500, 3000, [1985] * 5 + [1986] * 5),
]


def best_time(fn, repeats: int = REPEATS) -> float:
    fn()  # warm the (m, r) caches
    times = []
    for _ in range(repeats):
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
        for mu_method in ("lemma_c1", "tradeoff"):
            t = best_time(lambda stat=stat, mu_method=mu_method: mu_lower_bound(ov, m, r, statistic=stat, method=mu_method))
            print(f"  mu_lower_bound method={mu_method:<10} statistic={stat:<6} {t * 1e3:9.2f} ms")


def mu_table() -> None:
    """μ_lb (the unlearning claim's μ) by Lemma C.1 and by the trade-off function, mean statistic."""
    print()
    print(f"{'case':<32}{'mu_lb lemma_c1':>16}{'mu_lb tradeoff':>16}")
    for name, m, r, ov in CASES + TIMING_CASES:
        a, b = (mu_lower_bound(ov, m, r, method=k).mu_lb for k in ("lemma_c1", "tradeoff"))
        print(f"{name:<32}{a:>16.4f}{b:>16.4f}")


def timing_table() -> None:
    """Time of one p-value (at the adaptive ε_ldp of the case) and of one whole ε solve."""
    print()
    print(f"per p-value / per epsilon solve, ms (best of {REPEATS}; solve of the 4500 case best of 2), and epsilon_ldp:")
    print(f"{'case':<32}" + "".join(f"{m + ' p':>12}" for m in MEAN_METHODS) + "".join(f"{m + ' solve':>16}" for m in MEAN_METHODS)
          + "".join(f"{'eps ' + m:>14}" for m in MEAN_METHODS))
    for name, m, r, ov in TIMING_CASES:
        L = len(ov)
        value = sum(ov) / L
        eps = {meth: epsilon_lower_bound(ov, m, r, method=meth).epsilon_ldp for meth in MEAN_METHODS}
        at = eps["adaptive"]
        t_p = [best_time(lambda meth=meth: posterior_log_p_value(value, m, r, L, at, method=meth)) for meth in MEAN_METHODS]
        reps = 2 if m > 1000 else REPEATS
        t_s = [best_time(lambda meth=meth: epsilon_lower_bound(ov, m, r, method=meth), reps) for meth in MEAN_METHODS]
        print(f"{name:<32}" + "".join(f"{t * 1e3:>12.2f}" for t in t_p) + "".join(f"{t * 1e3:>16.1f}" for t in t_s)
              + "".join(f"{eps[meth]:>14.6f}" for meth in MEAN_METHODS))


if __name__ == "__main__":
    main()
    mu_table()
    timing_table()
