"""The page's JavaScript modules (static/dashboard/*.js: the pure ones as served, the others on a small
fake document, tests/dashboard/js/fakedom.mjs) are tested with Node's own test runner (tests/dashboard/js/*.test.mjs); this runs them inside the pytest suite
and fails when they fail, or when there is no `node` to run them (never a skip)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

JS_TESTS = Path(__file__).parent / "js"


def test_the_pure_page_modules_pass_their_node_tests() -> None:
    node = shutil.which("node")
    assert node, "node is needed to test the page's pure modules (Debian: apt-get install nodejs)"
    files = sorted(str(path) for path in JS_TESTS.glob("*.test.mjs"))
    assert files, f"no *.test.mjs under {JS_TESTS}"
    result = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout
