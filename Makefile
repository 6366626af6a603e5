# Two commands (see README.md):
#   make serve   set up, build and serve the lessons on http://127.0.0.1:$(PORT)/
#   make test    set up (venv, npm, Debian chromium), build, run every test
PYTHON ?= python3
# The model is small: one BLAS thread is as fast, and many threads crawl on a busy machine.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
PORT ?= 8000
VENV := .venv
PY := $(VENV)/bin/python
CHROMIUM := /usr/bin/chromium
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get install -y

.PHONY: serve test build train setup setup-dev chromium clean

serve: setup
	$(PY) build.py serve --isolated --port $(PORT)

test: setup-dev chromium
	$(PY) build.py
	$(PY) -m pytest tests

build: setup
	$(PY) build.py

# Retrains the tokenizer and the model from ../shared/corpus (PyTorch on the CPU, about 40 min).
train: | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-train.txt
	PYTHONPATH=py $(PY) -m minigpt.train --corpus ../shared/corpus

setup: $(VENV)/.installed-run node_modules/.installed
setup-dev: $(VENV)/.installed-dev node_modules/.installed

# Runs a system install as root, with sudo when it needs no password, or says what to do.
define as_root
	if [ "$$(id -u)" = 0 ]; then $(1); \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo sh -c '$(1)'; \
	else echo "Please install it first, as root: $(1)" >&2; exit 1; fi
endef

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "Python 3.11 or newer is needed as $(PYTHON) (set PYTHON=...)" >&2; exit 1; }
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { rm -rf $(VENV); \
	  $(call as_root,apt-get update && $(APT_INSTALL) python3-venv); \
	  $(PYTHON) -m venv $(VENV); }

$(VENV)/.installed-run: requirements.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@ $(VENV)/.installed-run

node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { $(call as_root,apt-get update && $(APT_INSTALL) nodejs npm); }
	npm ci --no-audit --no-fund
	touch $@

chromium:
	@[ -x $(CHROMIUM) ] || { echo "installing Debian's chromium for the browser tests"; \
	  $(call as_root,apt-get update && $(APT_INSTALL) chromium); }

clean:
	rm -rf site site.tmp
