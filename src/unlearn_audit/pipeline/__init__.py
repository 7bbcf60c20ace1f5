"""Everything that knows the workflow: config keys, file paths, one function per rule.

``workflow/rules/<section>.smk`` → ``workflow/scripts/<rule>.py`` → ``pipeline.<section>.<step>()``:

* :mod:`.config` — config validation (schema with defaults, then checks JSON Schema cannot express);
* :mod:`.plan` — what a config runs (experiments, chunks, input functions, targets), used by the rules;
* :mod:`.paths` — every output path;
* :mod:`.statistics`, :mod:`.convex`, :mod:`.gaussian_unlearning`, :mod:`.nn` — the rules' steps;
* :mod:`.runtime` — thread pools and the device of a job.
"""
