"""control/api asks the kind and never branches on one (DESIGN.md principle 10): no module of the
hub's HTTP face (its extras apart) imports a particular `Kind` or compares with a kind's name."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from control import kinds as registry
from control.kinds.base import Kind

API = Path(__file__).resolve().parents[2] / "control" / "api"


def _modules() -> list[Path]:
    return sorted(p for p in API.rglob("*.py") if "extras" not in p.relative_to(API).parts)


def kind_imports(path: Path) -> list[str]:
    """`from control.kinds.<module> import NAME` where NAME is a Kind (POD, SERVICE, ...)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("control.kinds"):
            module = importlib.import_module(node.module or "")
            found += [f"{node.module}.{alias.name}" for alias in node.names
                      if isinstance(getattr(module, alias.name, None), Kind)]
    return found


def kind_name_comparisons(path: Path) -> list[str]:
    """`== "Pod"`, `kind is ...`-style tests against the name of a served kind."""
    names = "|".join(sorted({k.kind for k in registry.KINDS}))
    pattern = re.compile(rf'(==|!=|\bin\b)\s*\(?\s*"({names})"')
    return [match.group(0) for match in pattern.finditer(path.read_text())]


def test_the_api_imports_no_particular_kind():
    offenders = {str(p.relative_to(API)): kind_imports(p) for p in _modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_api_compares_with_no_kinds_name():
    offenders = {str(p.relative_to(API)): kind_name_comparisons(p) for p in _modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_checks_would_catch_a_branch(tmp_path):
    branch = tmp_path / "branchy.py"
    branch.write_text('from control.kinds.pods import POD, pod_defaults\n'
                      'def f(obj):\n    return obj.get("kind") == "Namespace"\n')
    assert kind_imports(branch) == ["control.kinds.pods.POD"]
    assert kind_name_comparisons(branch) == ['== "Namespace"']
