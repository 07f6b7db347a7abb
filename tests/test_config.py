"""control.config: the one table of environment variables, the only reader of them, and the
README's configuration table rendered from it."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from control import config
from control.client.timings import KUBERNETES, WORKSHOP, Timings
from control.kubelet.config import KubeletConfig

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("control", "dashboard", "bench", "tests")
VARIABLE = re.compile(r"^KK_[A-Z0-9_]+$")


def python_files() -> list[Path]:
    return sorted(path for folder in SCANNED for path in (ROOT / folder).rglob("*.py")
                  if path != ROOT / "control" / "config.py")


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "KK_..." (e.g. client.http's TOKEN_ENV)."""
    found = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str) and VARIABLE.match(node.value.value)):
            found.update({target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)})
    return found


def _variable(node: ast.AST, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.match(node.value):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
            and str(node.values[0].value).startswith("KK_"):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{…}" for v in node.values)
    return None


def reads(source: str) -> list[tuple[int, str]]:
    """(line, name) of every lookup of a KK_ name: os.getenv, `.get`/`.setdefault` on any mapping
    (os.environ, a copy of it, an env dict), a subscript read, an `in` test. Writes (a child's
    environment being built, `del`, `.pop`) are not reads."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("get", "getenv", "setdefault"):
            name = _variable(node.args[0], constants)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            name = _variable(node.slice, constants)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            name = _variable(node.left, constants)
        if name:
            found.append((node.lineno, name))
    return found


def test_the_guard_sees_every_shape_of_read():
    source = ('import os\nTOKEN = "KK_TOKEN"\nos.environ.get("KK_A"); os.getenv("KK_B"); os.environ["KK_C"]\n'
              'env.get(TOKEN); "KK_D" in os.environ; env.get(f"KK_{x}")\n'
              'env = {**os.environ, "KK_E": "1"}; env["KK_F"] = "2"; env.pop("KK_G", None); del env["KK_H"]\n')
    assert [name for _, name in reads(source)] == ["KK_A", "KK_B", "KK_C", "KK_TOKEN", "KK_D", "KK_{…}"]


def test_no_module_but_control_config_reads_a_kk_variable():
    offenders = [f"{path.relative_to(ROOT)}:{line} reads {name}"
                 for path in python_files() for line, name in reads(path.read_text())]
    assert offenders == [], "read it through control.config (text/given/value): " + "; ".join(offenders)


def test_every_kk_name_in_the_code_is_in_the_table():
    named = set()
    for path in python_files():
        if path == Path(__file__):
            continue  # this file's own examples
        tree = ast.parse(path.read_text())
        prefixes = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" for arg in node.args}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.match(node.value) \
                    and id(node) not in prefixes:
                named.add(node.value)
    assert named - set(config.BY_NAME) - config.NOT_ENVIRONMENT == set()
    assert not config.NOT_ENVIRONMENT & set(config.BY_NAME)


def test_the_readme_table_is_the_tables_rendering():
    readme = (ROOT / "README.md").read_text()
    assert config.with_table(readme) == readme, "run `python -m control.config --readme`"
    assert readme.count(config.BEGIN) == 1 and readme.count(config.END) == 1
    for setting in config.SETTINGS:
        assert f"| `{setting.name}` |" in readme


def test_every_entry_is_documented_and_its_default_parses():
    for setting in config.SETTINGS:
        assert setting.meaning and setting.readers, setting.name
        if setting.default:
            setting.parse(setting.default)
        if setting.workshop is not None:
            setting.parse(setting.workshop)
    assert len(config.BY_NAME) == len(config.SETTINGS), "each name once"


def test_values_come_from_the_given_mapping_else_the_paces_default():
    assert config.value("KK_LOG_MAX_ENTRIES", {}) == 100000
    assert config.value("KK_LOG_MAX_ENTRIES", {"KK_LOG_MAX_ENTRIES": " 7 "}) == 7
    assert config.value("KK_LOG_MAX_ENTRIES", {"KK_LOG_MAX_ENTRIES": ""}) == 100000, "empty is unset"
    assert config.text("KK_CRASH_BACKOFF", {}) == "10:300"
    assert config.text("KK_CRASH_BACKOFF", {"KK_PACE": "Workshop"}) == "2:60"
    assert config.given("KK_HUB_URL", {}) == ""
    with pytest.raises(ValueError, match="KK_LOG_MAX_AGE='soon'"):
        config.value("KK_LOG_MAX_AGE", {"KK_LOG_MAX_AGE": "soon"})
    with pytest.raises(ValueError, match="KK_DECODE_WORKERS='0': must be more than 0"):
        config.value("KK_DECODE_WORKERS", {"KK_DECODE_WORKERS": "0"})
    with pytest.raises(KeyError):
        config.text("KK_NOT_DOCUMENTED", {})


def test_reads_happen_when_asked_not_at_import(monkeypatch):
    monkeypatch.setenv("KK_SCHEDULER_WORKERS", "3")
    assert config.value("KK_SCHEDULER_WORKERS") == 3
    monkeypatch.setenv("KK_SCHEDULER_WORKERS", "4")
    assert config.value("KK_SCHEDULER_WORKERS") == 4
    assert config.given("KK_SCHEDULER_WORKERS", config.environment()) == "4"
    monkeypatch.setenv("DATABASE_URL_UNRELATED", "x")
    assert "DATABASE_URL_UNRELATED" not in config.environment(), "only the table's names"


def test_component_mappings_take_their_defaults_from_the_table():
    assert Timings.from_env({}) == Timings(**KUBERNETES)
    assert Timings.from_env({"KK_PACE": "workshop"}) == Timings(**WORKSHOP)
    assert Timings.from_env({"KK_PACE": "workshop", "KK_HPA_SYNC": "9"}).hpa_sync == 9.0
    assert WORKSHOP["lease_renew"] == 3.0 and KUBERNETES["lease_renew"] == 10.0
    default, workshop = KubeletConfig.from_env({}), KubeletConfig.from_env({"KK_PACE": "workshop"})
    assert (default.backoff.base, default.backoff.cap, default.sync_seconds, default.pull_seconds) == (10, 300, 10, 0.5)
    assert (workshop.backoff.base, workshop.backoff.cap, workshop.sync_seconds, workshop.pull_seconds) == (2, 60, 2, 0.2)
    assert KubeletConfig.from_env({"KK_DATA_DIR": "/d"}).data_dir == Path("/d/kubelet")


IMPORT_ALL = """
import importlib, json, pkgutil, django
django.setup()  # control.settings, the designated reader, reads its variables here
from control import config
asked = []
given, default = config.given, config.default
config.given = lambda name, env=None: (asked.append(name), given(name, env))[1]
config.default = lambda name, env=None: (asked.append(name), default(name, env))[1]
import control.kinds, control.api
for package in (control.kinds, control.api):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
print(json.dumps(asked))
"""


def test_importing_kinds_and_api_modules_reads_no_variable():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "control.settings", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
