# unlearn-audit: `make reproduce` runs the workflow on the default config, `make test` runs the tests.
# Both create or update the virtual environment in $(VENV) first; both are idempotent.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all
SNAKEMAKE_ARGS ?=

.PHONY: install reproduce test test-fast test-paper-shapes bench report clean-results

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

reproduce: install
	$(BIN)/snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)

# The workflow first (nothing to do when it is up to date), then the report of its outputs, its header
# from the run's report_metadata.yaml (beside the report: REPORT goes in the config's results_dir); with
# another config: make report SNAKEMAKE_ARGS="--configfile config/paper.yaml" REPORT=results/paper/report.html
REPORT ?= results/report.html
report: install
	$(BIN)/snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	$(BIN)/snakemake --cores 1 $(SNAKEMAKE_ARGS) --report $(REPORT) --report-metadata $(dir $(REPORT))report_metadata.yaml

test: install
	$(BIN)/python -m pytest -q -n 2 -m "not paper_shapes"

test-paper-shapes: install
	$(BIN)/python -m pytest -q -p no:xdist -m paper_shapes tests/workflow/test_paper_shapes_run.py

test-fast: install
	$(BIN)/python -m pytest -q -n 2 -m "not workflow"

bench: install
	$(BIN)/python benchmarks/bounds.py

clean-results:
	rm -rf results/* .snakemake
	touch results/.gitkeep
