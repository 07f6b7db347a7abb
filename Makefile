# Kube Kitchen: `make run` starts the cluster, `make test` runs every test. Both set themselves up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.test-installed-stamp
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
PACE ?= kubernetes
ADDR ?= 127.0.0.1:8000
# Test processes (pytest-xdist): whole files per process, so a module's cluster is started once.
# Most of an end-to-end test's time is waiting for a cluster, so two processes fit a 2-core machine.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile

.PHONY: setup setup-test run test test-unit test-sqlite test-postgres bench clean

setup: $(STAMP)
setup-test: $(TEST_STAMP)

# What running needs, and nothing more: the venv and the package (the Korean catalogue is kept
# compiled in the repository, so no gettext; no browser, no fonts). Works the same on macOS.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

# What the tests need besides: their Python packages, Debian's Chromium (never a downloaded browser)
# with CJK fonts for the Korean view, and gettext to check the catalogues (tests/test_locale.py).
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test]"
	@test -x /usr/bin/chromium && fc-list 2>/dev/null | grep -qi "noto sans cjk" && command -v msgfmt >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk gettext; }
	touch $(TEST_STAMP)

run: setup
	$(PY) manage.py runcluster --addr $(ADDR) --pace $(PACE)

test: setup-test test-sqlite test-postgres

# The unit tests alone: no real server, no kubectl, no browser (the `e2e` marker); about 2 minutes.
test-unit: setup-test
	$(PY) -m pytest -p no:cacheprovider $(XDIST) -m "not e2e"

test-sqlite: setup-test
	$(PY) -m pytest -p no:cacheprovider $(XDIST)

# The store suite and the Service allocators (whose no-duplicates race only PostgreSQL shows) again on PostgreSQL; it fails (not skips) when PostgreSQL is not there.
test-postgres: setup-test
	KK_REQUIRE_POSTGRES=1 DATABASE_URL=$(PG_URL) $(PY) -m pytest -p no:cacheprovider tests/storage/test_store.py tests/storage/test_snapshot.py tests/storage/test_reader.py tests/api/test_allocation.py

bench: setup-test
	@# create_throughput compares the hub with etcd on this machine: Debian's etcd, started by the bench itself.
	@test -x /usr/bin/etcd || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server; }
	$(PY) bench/create_throughput.py
	$(PY) bench/watch_fanout.py
	$(PY) bench/self_healing.py
	$(PY) bench/scale.py
	$(PY) bench/scale.py --kwok
	$(PY) bench/endpoint_propagation.py

clean:
	rm -rf $(VENV) data
