# Two commands for a fresh machine: `make demo` and `make test` (see README.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: terminal mariadb demo test test-fast mutation install install-test browser postgres ui clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch first, pinned: here it is a CPU build on local disk; a later, unpinned resolution of
# sentence-transformers would otherwise pull a multi-gigabyte CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: install
	$(BIN)/rag-assets evaluate

# the browser test drives Debian's chromium (Playwright for Python, never `playwright install`)
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "the UI test needs Debian's chromium: sudo apt-get install chromium" >&2; exit 1; fi; }

# the production-instance test starts a real PostgreSQL server from Debian's postgresql (initdb, pg_ctl)
postgres:
	@command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	  else echo "the production-instance test needs Debian's postgresql: sudo apt-get install postgresql" >&2; exit 1; fi; }

# the publishing test writes evaluation runs into a real MariaDB server from Debian's mariadb-server
mariadb:
	@command -v mariadbd >/dev/null || ls /usr/sbin/mariadbd >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server; \
	  else echo "the publishing test needs Debian's mariadb-server: sudo apt-get install mariadb-server" >&2; exit 1; fi; }

# the labelling test drives `needles label` through a real terminal: tmux
terminal:
	@command -v tmux >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; \
	  else echo "the labelling test needs tmux: sudo apt-get install tmux" >&2; exit 1; fi; }

# two test processes, a test file each at a time (TEST_WORKERS=0 runs them in this one)
TEST_WORKERS ?= 2
test: install-test browser postgres terminal mariadb
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# the tests that need no graph run, real model, server or browser (pyproject.toml: markers)
test-fast: install-test
	$(BIN)/python -m pytest -m "not integration and not servers and not browser" -n $(TEST_WORKERS) --dist loadfile

# mutation testing of the core modules (pyproject.toml: [tool.mutmut]); the scores per module are printed by
# bench/mutation.py and recorded in BENCHMARKS.md with its time. Not part of `make test`
mutation: install-test
	$(BIN)/python bench/mutation.py --run

ui: install
	$(BIN)/rag-assets ui

clean:
	rm -rf $(VENV) storage mutants
