"""Pre-registered epsilon_lb and mean eval accuracies per experiment from results/regime/* (before the table exists)."""
import glob
import sys

import pandas as pd

root = sys.argv[1] if len(sys.argv) > 1 else "results/regime"
rows = []
for f in sorted(glob.glob(f"{root}/*/bounds.parquet")):
    b = pd.read_parquet(f)
    p = b[b.role == "preregistered"].iloc[0]
    exp = f.split("/")[-2]
    ms = glob.glob(f"{root}/{exp}/runs/**/*metric*", recursive=True)
    acc = pd.concat([pd.read_parquet(m) for m in ms]) if ms else pd.DataFrame()
    ev = acc[acc.phase == "eval"] if len(acc) else acc
    rows.append({"experiment": exp, "r": int(p.r), "eps_lb": round(float(p.epsilon_lb), 2),
                 "eps_lb_r144": round(float(b[(b.r == 144) & (b.score == p.score) & (b.statistic == p.statistic) & (b.test == p.test)].epsilon_lb.iloc[0]), 2),
                 "retain": ev.retain_acc.mean() if len(ev) else None, "forget": ev.forget_acc.mean() if len(ev) else None,
                 "test": ev.test_acc.mean() if len(ev) else None, "test_min": ev.test_acc.min() if len(ev) else None})
pd.set_option("display.width", 200)
print(pd.DataFrame(rows).round(3).to_string(index=False))
