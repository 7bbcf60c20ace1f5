"""A tabular dataset of one's own: scikit-learn's ``make_classification``, cut for an audit.

The loader contract (docs/configuration.md#your-own-model-and-data): called by keyword with the
design's ``split``, ``batch_size`` (B), ``m``, ``seed`` and ``resources_dir`` plus its
``dataset_params``; returns an ``AuditData`` whose candidate forget pool is ``m`` batches of B rows
(``forget_batch`` says which row is in which batch), with the retain, validation and test sets
beside it, the task kind and the number of classes.  The same arguments must give the same data.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_classification

from unlearn_audit.data import AuditData, DatasetError

#: Host memory (MB) a job needs for these arrays (the workflow asks SLURM for it): a few MB.
JOB_MEM_MB = 200


def load(*, split: str, batch_size: int, m: int, seed: int, resources_dir: str, n_samples: int = 800, n_features: int = 20,
         n_classes: int = 4, n_retain: int = 200, n_val: int = 100, n_test: int = 200) -> AuditData:
    """``n_samples`` rows of ``n_features`` features in ``n_classes`` classes (one fixed dataset);
    ``seed`` draws which rows form the pool of m·B candidates, the retain, validation and test sets.
    Features are standardised with the mean and deviation of the training rows (retain and pool)."""
    if split != "uniform":
        raise DatasetError(f"own_model_data: split {split!r} is not supported; use split: uniform")
    if batch_size is None:
        raise DatasetError("own_model_data: batch_size (B) is required")
    pool = m * batch_size
    need = pool + n_retain + n_val + n_test
    if need > n_samples:
        raise DatasetError(f"own_model_data: m·B + n_retain + n_val + n_test = {need} rows, more than n_samples = {n_samples}")
    X, y = make_classification(n_samples=n_samples, n_features=n_features, n_informative=n_features // 2, n_classes=n_classes,
                               n_clusters_per_class=2, flip_y=0.05, random_state=0)
    order = np.random.default_rng(seed).permutation(n_samples)
    cuts = np.cumsum([pool, n_retain, n_val, n_test])
    forget, retain, val, test = (order[a:b] for a, b in zip([0, *cuts[:-1]], cuts))
    train = np.concatenate([retain, forget])
    mean, sd = X[train].mean(axis=0), X[train].std(axis=0) + 1e-8
    Xs = ((X - mean) / sd).astype(np.float32)
    y = y.astype(np.int64)
    return AuditData(
        name="own_model_data", kind="classification", num_classes=n_classes,
        retain_x=Xs[retain], retain_y=y[retain], forget_x=Xs[forget], forget_y=y[forget],
        forget_batch=np.repeat(np.arange(m, dtype=np.int64), batch_size),
        val_x=Xs[val], val_y=y[val], test_x=Xs[test], test_y=y[test], m=m, batch_size=batch_size,
        meta={"source": "sklearn.datasets.make_classification", "n_samples": n_samples, "n_features": n_features},
        retain_id=retain.astype(np.int64), forget_id=forget.astype(np.int64), val_id=val.astype(np.int64), test_id=test.astype(np.int64),
    )


load.job_mem_mb = JOB_MEM_MB
