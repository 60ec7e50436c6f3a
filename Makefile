# embedlab: two setup-free commands.
#   make reproduce   full reproduction (creates .venv, installs, runs snakemake)
#   make test        the test suite (creates .venv, installs, runs pytest)
# Other targets: quick (few-minute smoke run), report (HTML report + browser check), lint,
# dry-run, clean, slurm-check (the quick run through a real one-node SLURM), docs (the docs
# site, generated from a run's tables and built in strict mode).

PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SNAKEMAKE := PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake --cores $(CORES) --scheduler greedy

.PHONY: reproduce quick report timings browser test lint dry-run clean venv slurm-check docs

venv: $(STAMP)

# pip byte-compiles what it installs one file at a time; compileall does it on every core. Like
# pip, it skips the files that do not compile (GPy ships some Python 2 files): bytecode is a
# cache, so a skipped file is compiled when imported. The packages' own test suites (a third of
# the sources: numpy's, scipy's, pandas' tests/ folders), which neither the tests nor the
# workflow import, are left out.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test,scale]'
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib > /dev/null || true
	touch $@

# CONFIG: the config file(s); the papers' full protocol is
#   make reproduce CONFIG="config/config.yaml config/paper.yaml"
CONFIG ?= config/config.yaml
reproduce: $(STAMP)
	$(SNAKEMAKE) --configfile $(CONFIG)
	$(MAKE) report CONFIG="$(CONFIG)"

# The HTML report of the last run of CONFIG, then checked in headless Chromium (every figure and
# table of the run shown, loading, captioned); skipped with a warning where no Chromium exists.
# The summary the check compares with is read beside the report (both only read the run).
report: $(STAMP)
	$(SNAKEMAKE) --configfile $(CONFIG) --summary > results/report_expected.tsv & \
	  $(SNAKEMAKE) --configfile $(CONFIG) --report results/report.html && wait $$!
	@if $(BIN)/python -c "import embedlab.report_check as r; exit(r.find_browser() is None)"; then \
	  $(BIN)/python -m embedlab check-report results/report.html \
	    --expect-summary results/report_expected.tsv; \
	else echo "warning: no Chromium on PATH: report not checked (make browser installs it)"; fi

# Where the last run of CONFIG's time went (also made by the workflow's last job and shown in
# the report), and its critical path: the longest chain of dependent jobs by measured wall
# time, the least wall time that more cores could reach; beside it, the wall time of the same
# jobs in one sitting on CORES cores (a run resumed over several sittings spans more). The
# jobs' dependencies come from Snakemake's dry run of CONFIG (logs/timings_dry_run.txt); the
# path's jobs also go to logs/critical_path.csv (not results/tables: the runs' comparisons
# expect the workflow's tables only there).
timings: $(STAMP)
	@mkdir -p logs
	$(SNAKEMAKE) --configfile $(CONFIG) --dry-run --forceall > logs/timings_dry_run.txt 2>&1 \
	  || { cat logs/timings_dry_run.txt; exit 1; }
	$(BIN)/python -m embedlab timings --benchmarks logs/benchmarks \
	  --dry-run logs/timings_dry_run.txt --critical-path-csv logs/critical_path.csv --cores $(CORES) \
	  --csv results/tables/timings.csv --md results/tables/timings.md
	@cat results/tables/timings.md

# Debian's Chromium for the report check (tests/test_report.py); needs root and apt-get
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	    >/dev/null; } || echo "warning: Chromium not installed: the report tests will be skipped"

# one thread per job: the quick run's jobs are small (imports and compiles, not kernels), so two
# single-thread jobs fill the 2 cores where one 2-thread job left one idle
# CONFIG's files other than the default are merged over config/quick.yaml (a mirror folder, an
# offline switch, own datasets): make quick CONFIG="config/config.yaml my.yaml"
QUICK_CONFIG := config/quick.yaml $(filter-out config/config.yaml,$(CONFIG))
quick: $(STAMP)
	$(SNAKEMAKE) --configfile $(QUICK_CONFIG) --max-threads 1
	$(MAKE) report CONFIG="$(QUICK_CONFIG)"

# The docs site: docs/*.md filled from docs/templates and the tables in docs/data, then built
# with MkDocs in strict mode into results/site. RESULTS=<a run's results folder> first copies
# that run's tables into docs/data (CONFIGURATION names the run's config, shown on every page):
#   make docs RESULTS=results CONFIGURATION="default: config/config.yaml"
RESULTS ?=
CONFIGURATION ?=
docs: $(STAMP)
	$(BIN)/python -m embedlab docs $(if $(RESULTS),--results "$(RESULTS)" --configuration "$(CONFIGURATION)") $(if $(SECTION),--section "$(SECTION)")
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# The venv and Chromium are installed side by side (pip and apt-get each keep about one core
# busy). --maxschedchunk 1: a worker takes the next test when it frees up (the slow ones
# first, tests/conftest.py), so both cores stay busy to the end
test:
	@$(MAKE) --no-print-directory -j 2 venv browser
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -n $(CORES) --maxschedchunk 1 tests

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake --lint

dry-run: $(STAMP)
	$(SNAKEMAKE) --dry-run

clean:
	rm -rf results logs .snakemake

# SLURM profile check (root; installs Debian's slurm-wlm + munge, starts a one-node cluster on
# localhost): the quick configuration run locally and through workflow/profiles/slurm, results
# compared. See scripts/slurm/check.sh and the README section "Running on a cluster (SLURM)".
CLUSTER_STAMP := $(VENV)/.installed-cluster

$(CLUSTER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,scale,cluster]'
	touch $@

slurm-check: $(CLUSTER_STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" SLURM_CHECK_CORES=$(CORES) scripts/slurm/check.sh
