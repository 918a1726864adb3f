# autogradviz -- developer tasks.
#
#   make test       the linter, unit tests, then the notebooks through nbval (everything, the browser tests included)
#   make test-fast  the linter, then the unit tests without those marked slow or ui (the quick loop while you work)
#   make lint       the linter alone (ruff check; the rules are [tool.ruff] in pyproject.toml)
#   make site       the course as a static website in site/ (every stepper steps offline)
#   make lab        JupyterLab on notebooks/ (interface language as you have it set)
#   make lab-zh     JupyterLab on notebooks/ with the Chinese (zh_CN) interface
#   make bench      engine and viz benchmarks (when they exist)
#   make notebooks  rebuild the lessons from notebooks/src and execute them (LESSONS="03-leaf-tensors" for some)
#   make clean      caches and build artifacts (keeps .venv); `make distclean` removes .venv too
#
# Everything runs in a project-local virtual environment, .venv. The project is installed into it
# (editable) once per content of pyproject.toml: a stamp file .venv/.installed-<hash>-<flavour>
# records that, so editing pyproject.toml triggers a reinstall and nothing else does.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
JUPYTER := $(VENV)/bin/jupyter

# The linter's paths ([tool.ruff] in pyproject.toml holds its rules).
LINT_PATHS := autogradviz tests tools benchmarks

# Extra arguments for `jupyter lab`, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`.
LAB_ARGS ?=

PYPROJECT_HASH := $(shell $(PYTHON) -c "import hashlib; print(hashlib.sha256(open('pyproject.toml', 'rb').read()).hexdigest()[:16])")
ifeq ($(PYPROJECT_HASH),)
$(error could not hash pyproject.toml with $(PYTHON))
endif

# Stamp flavours and the extras each one installs.
EXTRAS_test := test,lab
EXTRAS_lab  := lab
STAMP_TEST  := $(VENV)/.installed-$(PYPROJECT_HASH)-test
STAMP_LAB   := $(VENV)/.installed-$(PYPROJECT_HASH)-lab

LESSONS ?=

# Where JupyterLab opens: the index notebook if there is one, else the notebooks folder.
# (A file argument makes its folder the server's root and opens the file.)
LAB_TARGET := $(if $(wildcard notebooks/index.ipynb),notebooks/index.ipynb,$(if $(wildcard notebooks),notebooks,.))

# Project-local JupyterLab user-settings folder for `make lab-zh`. The language is the setting
# "locale" of the plugin @jupyterlab/translation-extension:plugin; user settings take precedence
# over overrides.json, so this wins whatever the user's own ~/.jupyter says, and it leaves the
# plain `make lab` alone (an overrides.json in .venv/share/jupyter/lab/settings would not).
LAB_ZH_SETTINGS := $(abspath $(VENV))/lab-zh/user-settings
LAB_ZH_LOCALE_FILE := $(LAB_ZH_SETTINGS)/@jupyterlab/translation-extension/plugin.jupyterlab-settings

# The notebooks run exactly as a plain `python -m pytest --nbval notebooks/` does: notebooks/conftest.py pins the
# renderer the stored drawings were made with, the kernel (this venv) and the sanitizers, whatever the entry point.
NBVAL_ARGS := --nbval -q -p no:cacheprovider

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv install lint test test-fast site lab lab-zh bench notebooks clean distclean help

help:
	@sed -n '2,12p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------- virtual environment

$(VPY):
	@echo ">>> creating $(VENV) with $(PYTHON) ($$($(PYTHON) --version 2>&1))"
	$(PYTHON) -m venv $(VENV)

$(VENV): $(VPY)

venv: $(VPY)

# One stamp per flavour (test, lab). Stale stamps of an older pyproject.toml are removed first.
$(VENV)/.installed-$(PYPROJECT_HASH)-%: | $(VPY)
	@find $(VENV) -maxdepth 1 -name '.installed-*' ! -name '.installed-$(PYPROJECT_HASH)-*' -delete
	$(VPY) -m pip install -e '.[$(EXTRAS_$*)]'
	@touch $@

install: $(STAMP_TEST)

# ---------------------------------------------------------------- tests

# The linter runs first in both test targets: a lint error fails them before any test runs.
lint: $(STAMP_TEST)
	$(VENV)/bin/ruff check $(LINT_PATHS)

# pytest exits 5 when it collected no tests; that is not a failure here. Both suites run even when
# the first fails, so one run reports everything; the target fails if either did.
test: export OMP_NUM_THREADS := 1
test: lint
	@status=0; \
	echo ">>> unit tests: $(VPY) -m pytest tests -q"; \
	t0=$$(date +%s); rc=0; $(VPY) -m pytest tests -q || rc=$$?; \
	echo ">>> unit tests took $$(( $$(date +%s) - t0 )) s"; \
	if [ $$rc -eq 5 ]; then echo ">>> pytest collected no tests in tests/"; \
	elif [ $$rc -ne 0 ]; then status=$$rc; fi; \
	if find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null | grep -q .; then \
	  echo ">>> notebooks: $(VPY) -m pytest $(NBVAL_ARGS) notebooks/"; \
	  t0=$$(date +%s); rc=0; $(VPY) -m pytest $(NBVAL_ARGS) notebooks/ || rc=$$?; \
	  echo ">>> notebooks took $$(( $$(date +%s) - t0 )) s"; \
	  if [ $$rc -eq 5 ]; then echo ">>> nbval collected no cells"; \
	  elif [ $$rc -ne 0 ]; then status=$$rc; fi; \
	else \
	  echo ">>> no notebooks under notebooks/ yet; nbval skipped"; \
	fi; \
	exit $$status

# The quick loop: no notebook, subprocess, browser or three-engine test (those are marked slow or ui), spread over
# FAST_WORKERS processes (pytest-xdist; default: the CPUs, at most 4). Python may write its bytecode caches here
# (even where PYTHONDONTWRITEBYTECODE is set), so that a second run does not compile the package and re-write the
# tests' asserts again; nbval's plugin is not loaded (no notebook runs).
FAST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
test-fast: export OMP_NUM_THREADS := 1
test-fast: lint
	env -u PYTHONDONTWRITEBYTECODE $(VPY) -m pytest tests -q -p no:cacheprovider -p no:nbval -n $(FAST_WORKERS) \
	  -m "not slow and not ui"

# ---------------------------------------------------------------- the website

site: export OMP_NUM_THREADS := 1
site: $(STAMP_TEST)
	@start=$$(date +%s); $(VPY) tools/build_site.py --out site; echo ">>> make site took $$(( $$(date +%s) - start )) s"

# ---------------------------------------------------------------- JupyterLab

lab: $(STAMP_LAB)
	$(JUPYTER) lab $(LAB_ARGS) $(LAB_TARGET)

lab-zh: $(STAMP_LAB)
	@mkdir -p "$(dir $(LAB_ZH_LOCALE_FILE))"
	@printf '{\n  "locale": "zh_CN"\n}\n' > "$(LAB_ZH_LOCALE_FILE)"
	$(JUPYTER) lab --LabApp.user_settings_dir="$(LAB_ZH_SETTINGS)" $(LAB_ARGS) $(LAB_TARGET)

# ---------------------------------------------------------------- benchmarks, notebooks

bench: export OMP_NUM_THREADS := 1
bench: export OPENBLAS_NUM_THREADS := 1
bench: $(STAMP_TEST)
	@ran=0; \
	for b in benchmarks/bench_engine.py benchmarks/bench_viz.py; do \
	  if [ -f $$b ]; then echo ">>> $(VPY) $$b"; $(VPY) $$b || exit $$?; ran=1; fi; \
	done; \
	if [ $$ran -eq 0 ]; then echo ">>> no benchmarks yet (benchmarks/bench_engine.py, benchmarks/bench_viz.py)"; fi

# Lessons are written in notebooks/src/*.lesson (both languages in one file); this rebuilds
# notebooks/en and notebooks/zh from them and executes them, storing outputs and widget state.
# The renderer is pinned so that the stored SVG is the one nbval will compare against.
notebooks: export OMP_NUM_THREADS := 1
notebooks: export AUTOGRADVIZ_RENDERER := wasm
notebooks: $(STAMP_TEST)
	$(VPY) tools/build_notebooks.py --execute $(LESSONS)

# ---------------------------------------------------------------- cleaning

clean:
	rm -rf build dist site .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name '*.egg-info' -prune -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
