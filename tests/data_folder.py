"""A pytest plugin (loaded by `-p` in pyproject.toml, so before pytest-django reads the settings):
each test session gets its own data folder, a fresh temporary `KK_DATA_DIR`, removed at the end.

Why: the settings' data folder holds the token file, the signing keys and the test databases; a
session must not inherit users an earlier session (or a `make run` in the checkout) left there,
and must leave nothing behind in the checkout. A `KK_DATA_DIR` set by the caller is kept.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from control import config

if not config.given("KK_DATA_DIR"):
    _folder = tempfile.mkdtemp(prefix="kk-test-data-")
    os.environ["KK_DATA_DIR"] = _folder
    atexit.register(shutil.rmtree, _folder, True)
elif os.environ.get("PYTEST_XDIST_WORKER"):
    # A worker of `pytest -n` inherits its controller's folder: each worker takes a folder of its own
    # inside it, so two workers never share a token file, keys or a database.
    _folder = os.path.join(config.given("KK_DATA_DIR"), os.environ["PYTEST_XDIST_WORKER"])
    os.makedirs(_folder, mode=0o700, exist_ok=True)
    os.environ["KK_DATA_DIR"] = _folder
