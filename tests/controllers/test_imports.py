"""Controllers are spokes: they import the spoke toolkit, the clock, pure kind helpers and errors, nothing
of the hub (no store, no API, no models, no Django)."""

from __future__ import annotations

import ast
from pathlib import Path

import control.controllers

# control.keys: the cluster CA file in the data folder (the root CA publisher reads it, as upstream
# reads --root-ca-file); it knows no store, API or models.
ALLOWED = ("control.client", "control.clock", "control.kinds", "control.errors", "control.controllers", "control.keys")
PACKAGE = Path(control.controllers.__file__).parent


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_controllers_import_only_the_toolkit_kinds_and_errors():
    for path in sorted(PACKAGE.glob("*.py")):
        for name in imported(path):
            if name == "control" or name.startswith("control.") or name.startswith("django"):
                assert name.startswith(ALLOWED) or name == "control", f"{path.name} imports {name}"


def test_every_controller_module_says_what_it_guarantees_and_stays_small():
    for path in sorted(PACKAGE.glob("*.py")):
        source = path.read_text()
        assert ast.get_docstring(ast.parse(source)), f"{path.name} has no module docstring"
        assert len(source.splitlines()) <= 400, f"{path.name} is over 400 lines"
