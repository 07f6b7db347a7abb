"""kube-proxy is a spoke: it may import only the spoke toolkit, the clock, the pure kinds, the error
vocabulary and itself — never the store, the models, the API server or another component."""

import ast
from pathlib import Path

import control.proxy

ALLOWED = ("control.client", "control.clock", "control.kinds", "control.errors", "control.proxy")


def test_kube_proxy_imports_only_what_a_spoke_may():
    offending = []
    for path in Path(control.proxy.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "control":
                names = [f"control.{a.name}" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                names = []
            offending += [f"{path.name}: {n}" for n in names
                          if n.split(".")[0] in ("control", "dashboard") and not n.startswith(ALLOWED)]
    assert offending == []
