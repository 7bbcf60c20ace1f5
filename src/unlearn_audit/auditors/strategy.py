"""What a sign-vector audit asks of its strategy (:class:`~.audit.SignVectorAudit`): the interface
``Batchwise`` (Algorithm 2), ``Joint`` (Algorithm 3) and ``Pairwise`` (App. A.3) share, and that a
user's own strategy implements to be audited the same way (docs/cli.md, "Your own scores").
Torch-free."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from .runs import PhaseRuns

__all__ = ["AuditStrategy"]


@runtime_checkable
class AuditStrategy(Protocol):
    """A strategy of a sign-vector audit.

    ``name`` labels its table rows; ``delta_kind`` says how a bound's δ is read (``"ldp"``: the
    induced LDP mechanism's, Lemma C.1; ``"unlearning"``: the unlearning claim's).  ``fit`` sees
    the calibration runs only, ``predict`` scores every evaluation run from that fit, and ``guess``
    turns the scores into Ŝ (L, m) with guess budget r; ``check_design`` refuses an m the strategy
    cannot audit, before any fit."""

    name: ClassVar[str]
    delta_kind: ClassVar[str]

    def check_design(self, m: int) -> None: ...

    def fit(self, calibration: PhaseRuns) -> Any: ...

    def predict(self, fit: Any, evaluation: PhaseRuns) -> np.ndarray: ...

    def guess(self, prediction: np.ndarray, r: int) -> np.ndarray: ...
