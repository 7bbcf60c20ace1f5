"""unlearn-audit: membership-inference audits of machine-unlearning algorithms.

The statistical core (:mod:`unlearn_audit.signs`, :mod:`unlearn_audit.bounds`,
:mod:`unlearn_audit.gaussian_mechanism`) depends on numpy and scipy only.
"""

__version__ = "0.1.0"
