"""What `pip install .` puts in the wheel: every package, the YAML the packages read, and the
folders the dashboard serves (templates, static, lessons, locale with its compiled .mo), which
setup.py copies into `kube_kitchen_files/`; and the `kube-kitchen` command. Built with setup.py's
own build step (what bdist_wheel zips) in a copy of the sources, so the checkout stays clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from control import installation

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "control", "dashboard", *installation.SHIPPED)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    source, lib = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("lib")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=source, check=True,
                   capture_output=True)
    return lib


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_served_folders_ship_whole(built):
    for name in installation.SHIPPED:
        assert files_under(ROOT / name) <= files_under(built / installation.FILES_PACKAGE / name), name
    assert (built / installation.FILES_PACKAGE / "locale/ko/LC_MESSAGES/django.mo").is_file()
    assert (built / installation.FILES_PACKAGE / "lessons/01-declarative.yaml").is_file()


def test_every_package_and_the_data_it_reads_ship(built):
    for package in ("control", "dashboard"):
        for init in (ROOT / package).rglob("__init__.py"):
            assert (built / init.relative_to(ROOT)).is_file(), f"{init.parent.relative_to(ROOT)} is not in the wheel"
    for data in [ROOT / "control/kubelet/data/images.yaml", *(ROOT / "dashboard/examples").glob("*.yaml")]:
        assert (built / data.relative_to(ROOT)).is_file(), f"{data.relative_to(ROOT)} is not in the wheel"
    assert (built / "control/__main__.py").is_file(), "children of an installed cluster start as python -m control"


def test_installed_it_serves_from_the_shipped_copy_and_keeps_data_out_of_site_packages(built, monkeypatch, tmp_path):
    monkeypatch.setattr(installation, "PACKAGE_ROOT", built)
    assert not installation.in_checkout()
    for name in installation.SHIPPED:
        assert installation.shipped(name) == built / installation.FILES_PACKAGE / name
    assert installation.manage_command() == [sys.executable, "-m", "control"]
    monkeypatch.delenv("KK_DATA_DIR", raising=False)
    from platformdirs import user_data_path

    assert installation.default_data_dir() == user_data_path("kube-kitchen", appauthor=False)
    monkeypatch.setenv("KK_DATA_DIR", str(tmp_path))
    assert installation.default_data_dir() == tmp_path


def test_a_checkout_serves_its_own_folders_and_keeps_data_in_dot_data(monkeypatch):
    monkeypatch.delenv("KK_DATA_DIR", raising=False)
    assert installation.in_checkout()
    assert installation.shipped("lessons") == ROOT / "lessons"
    assert installation.default_data_dir() == ROOT / "data", "make run's data stays in ./data"
    assert installation.manage_command() == [sys.executable, str(ROOT / "manage.py")]


def test_the_command_and_the_dependencies_it_needs_are_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"kube-kitchen": "control.cli:main"}
    assert any(d.startswith("platformdirs") for d in project["dependencies"])
    assert project["requires-python"] == ">=3.11"
