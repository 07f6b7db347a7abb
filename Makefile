# Kube Kitchen: `make run` starts the cluster, `make test` runs every test. Both set themselves up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PG_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: setup run test test-sqlite test-postgres bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: setup
	$(PY) manage.py runcluster

test: setup test-sqlite test-postgres

test-sqlite: setup
	$(PY) -m pytest -p no:cacheprovider

# The store suite again on PostgreSQL; it fails (not skips) when PostgreSQL is not there.
test-postgres: setup
	KK_REQUIRE_POSTGRES=1 DATABASE_URL=$(PG_URL) $(PY) -m pytest -p no:cacheprovider tests/test_store.py

bench: setup
	$(PY) bench/create_throughput.py
	$(PY) bench/watch_fanout.py

clean:
	rm -rf $(VENV) data
