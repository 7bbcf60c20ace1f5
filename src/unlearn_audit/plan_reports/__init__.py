"""The reports of ``unlearn-audit plan`` (:mod:`.hours`: what a config costs, per table and per kind of
job) and ``plan --check`` (:mod:`.check`: the cost model against a finished run's job times), on the
command line's floor: they read the workflow's plan (``pipeline.plan``) and its cost model
(``pipeline.plan.cost``), and nothing below imports them (docs/development.md)."""
