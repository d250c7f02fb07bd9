# Two commands on a fresh machine: `make run` and `make test` (see README.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXAMPLE ?= models/simple-DIA-cfg-1.storm.json
export QT_API := pyside6

.PHONY: run test lint setup dist test-dist bench clean fuzz

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,spark]"
	@touch $(STAMP)

setup: $(STAMP)

# Opens the app on an example; with no display (or no GUI yet) prints the rate check instead.
run: $(STAMP)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] && $(PY) -c "import app.gui.mainwindow" 2>/dev/null; then \
		$(VENV)/bin/stormbound gui $(EXAMPLE); \
	else \
		echo "(no display: printing the rate check of $(EXAMPLE))"; \
		$(VENV)/bin/stormbound check $(EXAMPLE); \
	fi

# The whole suite on PYTEST_WORKERS processes (pytest-xdist; `auto`: one per core); PYTEST_WORKERS=0 runs it in
# this one process. --dist loadscope sends each test module whole to one worker, and every Spark test to the same
# one, sharing one local[2] session (tests/conftest.py); the slowest tests' times are printed at the end.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadscope)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider --durations=25 $(PYTEST_PARALLEL)

$(VENV)/.lint-installed: $(STAMP)
	$(PY) -m pip install --quiet -e ".[lint]"
	@touch $@

# ruff (rules and line length in pyproject.toml) and mypy (strict for every module of app/).
lint: $(VENV)/.lint-installed
	$(PY) -m ruff check app tests bench packaging
	$(PY) -m mypy

$(VENV)/.dist-installed: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dist]"
	@touch $@

# The bundle, its .tar.gz and (with dpkg-deb) the .deb packages stormbound and stormbound-spark
# (docs/install.md); DEB=0 skips the packages, SPARK_DEB=0 the Spark one.
dist: $(VENV)/.dist-installed
	bash packaging/build.sh

test-dist: $(VENV)/.dist-installed
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m slow tests/dist

fuzz: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m fuzz tests/unit/test_fuzz_readers.py tests/unit/test_fuzz_run_folders.py

bench: $(STAMP)
	@for f in bench/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) build dist
