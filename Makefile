# Two commands (see README.md):
#   make serve   set up, build and serve the lessons on http://127.0.0.1:$(PORT)/
#   make test    set up (venv, npm, Debian's browsers), build, run every test
# and, while working:
#   make check   the tests that need no browser (unit, property, build and site tests)
PYTHON ?= python3
# The model is small: one BLAS thread is as fast, and many threads crawl on a busy machine.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
PORT ?= 8000
VENV := .venv
PY := $(VENV)/bin/python
# The browsers the tests drive, as "file=Debian package" (MiniBrowser comes with webkit2gtk-driver).
BROWSERS := /usr/bin/chromium=chromium /usr/bin/firefox-esr=firefox-esr \
  /usr/bin/WebKitWebDriver=webkit2gtk-driver /usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser=webkit2gtk-driver \
  /usr/bin/Xvfb=xvfb
MISSING = $(sort $(foreach pair,$(BROWSERS),$(if $(wildcard $(word 1,$(subst =, ,$(pair)))),,$(word 2,$(subst =, ,$(pair))))))
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get install -y

.PHONY: serve test check build train setup setup-dev browsers chromium clean

serve: setup
	$(PY) build.py serve --isolated --port $(PORT)

# The whole suite, in four pytest runs at once (README, «Tests: how long, and why»): the Chromium
# tests (tests/e2e); beside them the Firefox tests and the WebKit tests (tests/engines, one run per
# engine), which fill the time the others spend waiting on a page; and, at the lowest CPU priority,
# every test that needs no browser. The other reports follow Chromium's; any run failing fails this.
NO_BROWSER := --ignore=tests/e2e --ignore=tests/engines
test: setup-dev browsers
	$(PY) build.py
	@mkdir -p .cache; rm -f .cache/check.log .cache/firefox.log .cache/webkit.log; \
	nice -n 19 $(PY) -m pytest tests $(NO_BROWSER) -p no:cacheprovider > .cache/check.log 2>&1 & cpu=$$!; \
	$(PY) -m pytest tests/engines -k firefox -p no:cacheprovider > .cache/firefox.log 2>&1 & firefox=$$!; \
	$(PY) -m pytest tests/engines -k webkit -p no:cacheprovider > .cache/webkit.log 2>&1 & webkit=$$!; \
	trap 'kill $$cpu $$firefox $$webkit 2>/dev/null' INT TERM; \
	$(PY) -m pytest tests/e2e; chromium=$$?; \
	failed=$$(( chromium != 0 )); \
	wait $$firefox || failed=1; \
	echo "=== the Firefox tests (run beside the Chromium tests, .cache/firefox.log) ==="; \
	cat .cache/firefox.log; \
	wait $$webkit || failed=1; \
	echo "=== the WebKit tests (run beside the Chromium tests, .cache/webkit.log) ==="; \
	cat .cache/webkit.log; \
	wait $$cpu || failed=1; \
	echo "=== the tests that need no browser (run beside the browser tests, .cache/check.log) ==="; \
	cat .cache/check.log; \
	exit $$failed

# The fast tier: every test but the browser ones, spread over the cores (pytest-xdist).
check: setup-dev
	$(PY) build.py
	$(PY) -m pytest -n auto tests $(NO_BROWSER)

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

# Installs, in one apt-get, whichever of Debian's chromium, firefox-esr, webkit2gtk-driver and xvfb is missing.
browsers:
	@$(if $(MISSING),echo "installing Debian's $(MISSING) for the browser tests"; \
	  $(call as_root,apt-get update && $(APT_INSTALL) $(MISSING)),true)

chromium: browsers

clean:
	rm -rf site site.tmp
