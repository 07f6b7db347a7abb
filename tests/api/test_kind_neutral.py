"""control/api asks the kind and never branches on one (DESIGN.md principle 10): no module of the
hub's HTTP face, its extras included, imports a particular `Kind`, looks one up by a literal
(`by_resource("", "v1", "nodes")`, `by_gvk("v1", "Pod")`), names a served kind's store key
(`"/pods"`) or compares with a kind's name. The few extras that are by their nature clients of
particular kinds (as metrics-server or CoreDNS are outside kube-apiserver) are listed in `CLIENTS`,
each with its reason; nothing else may be."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from control import kinds as registry
from control.kinds.base import Kind

API = Path(__file__).resolve().parents[2] / "control" / "api"
# extras that serve a view *of* particular kinds, as separate servers do upstream: exempt from
# the store-key check only (they still import no Kind and compare with no kind's name)
CLIENTS = {
    "extras/metrics.py": "metrics.k8s.io: NodeMetrics and PodMetrics are views of Nodes and Pods (metrics-server)",
    "extras/services.py": "the kitchen's DNS and traffic views: Services, Endpoints and the Nodes' kube-proxies (CoreDNS)",
    "admission.py": "NamespaceLifecycle admission: every namespaced write asks whether its Namespace exists",
}
def _modules() -> list[Path]:
    return sorted(API.rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(API))


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


def literal_lookups(path: Path) -> list[str]:
    """A registry lookup whose arguments are all literals: `by_resource("", "v1", "nodes")`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in ("by_resource", "by_gvk")
                and node.args and all(isinstance(a, ast.Constant) for a in node.args)):
            found.append(ast.unparse(node))
    return found


def store_keys(path: Path) -> list[str]:
    """A string literal that is a served kind's store key ("/pods", "apps/deployments")."""
    keys = {k.resource for k in registry.KINDS}
    return [node.value for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys]


def test_the_api_imports_no_particular_kind():
    offenders = {_name(p): kind_imports(p) for p in _modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_api_compares_with_no_kinds_name():
    offenders = {_name(p): kind_name_comparisons(p) for p in _modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_api_looks_up_no_kind_by_a_literal():
    offenders = {_name(p): literal_lookups(p) for p in _modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_api_names_no_kinds_store_key_but_its_declared_clients():
    offenders = {_name(p): store_keys(p) for p in _modules() if _name(p) not in CLIENTS}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert all((API / name).exists() for name in CLIENTS)  # an exemption outliving its module goes


def test_the_checks_would_catch_a_branch(tmp_path):
    branch = tmp_path / "branchy.py"
    branch.write_text('from control.kinds.pods import POD, pod_defaults\n'
                      'from control import kinds as registry\n'
                      'def f(obj):\n    return obj.get("kind") == "Namespace"\n'
                      'def g():\n    return registry.by_resource("", "v1", "nodes"), store.get(resource="/pods")\n')
    assert kind_imports(branch) == ["control.kinds.pods.POD"]
    assert kind_name_comparisons(branch) == ['== "Namespace"']
    assert literal_lookups(branch) == ["registry.by_resource('', 'v1', 'nodes')"]
    assert store_keys(branch) == ["/pods"]
