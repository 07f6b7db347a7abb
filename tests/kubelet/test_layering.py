"""The kubelet is a spoke: it may import only the spoke toolkit, the clock, the pure kinds, the error
vocabulary, the containers' userland and itself — never the store, the models or the API server (DESIGN.md)."""

import ast
from pathlib import Path

import control.kubelet

# control.installation: a leaf (os, pathlib, platformdirs) saying where the data folder is by default.
# control.config: a leaf (the standard library) that names and reads the environment's variables.
# control.userland: the containers' shell and programs, which import neither the kubelet nor the client.
ALLOWED = ("control.client", "control.clock", "control.kinds", "control.errors", "control.kubelet", "control.installation",
           "control.config", "control.userland")


def test_the_kubelet_imports_only_what_a_spoke_may():
    offending = []
    for path in Path(control.kubelet.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "control":
                names = [f"control.{a.name}" for a in node.names]  # from control import errors
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                names = []
            for name in names:
                if name.split(".")[0] in ("control", "dashboard") and not name.startswith(ALLOWED):
                    offending.append(f"{path.name}: {name}")
    assert offending == []
