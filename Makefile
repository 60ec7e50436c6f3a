# embedlab: two setup-free commands.
#   make reproduce   full reproduction (creates .venv, installs, runs snakemake)
#   make test        the test suite (creates .venv, installs, runs pytest)
# Other targets: quick (few-minute smoke run), lint, dry-run, clean.

PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SNAKEMAKE := PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake --cores $(CORES)

.PHONY: reproduce quick test lint dry-run clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

reproduce: $(STAMP)
	$(SNAKEMAKE) --configfile config/config.yaml
	$(SNAKEMAKE) --configfile config/config.yaml --report results/report.html

quick: $(STAMP)
	$(SNAKEMAKE) --configfile config/quick.yaml

test: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -n $(CORES) tests

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake --lint

dry-run: $(STAMP)
	$(SNAKEMAKE) --dry-run

clean:
	rm -rf results logs .snakemake
