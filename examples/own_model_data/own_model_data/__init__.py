"""A model and a dataset of one's own, audited by the workflow without any edit to the library:
a tabular classification dataset made by scikit-learn (:mod:`.data`) and a small MLP (:mod:`.model`),
named in the config by import path (``config.yaml`` beside this package)."""
