"""The cost model beside the plan: the work of each run (:mod:`.runs`), the step costs recorded in
``benchmarks/RESULTS.md`` (:mod:`.throughput`), a config's device-hours (:mod:`.hours`, ``unlearn-audit
plan``) and the prediction checked against a finished run (:mod:`.check`, ``plan --check``).
:mod:`.runs` and :mod:`.throughput` import no plan (the plan's chunk pricing reads them); :mod:`.hours`
and :mod:`.check` read the composed plan.  Torch-free."""
