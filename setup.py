"""The wheel's build step beyond pyproject.toml: the folders the dashboard serves (templates,
static, lessons, locale with its compiled .mo) live at the top of the repository, outside any
package, so they are copied into the wheel as `kube_kitchen_files/<name>/` beside `control`, where
`control.installation.shipped` finds them in an installed Kube Kitchen. An editable install
(`make run`'s) uses the checkout's folders in place and copies nothing."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = ("templates", "static", "lessons", "locale")  # as control.installation.SHIPPED


class BuildWithServedFiles(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in SHIPPED:
            source = HERE / name
            if not source.is_dir():
                raise SystemExit(f"{source} is missing: the wheel would run without its {name}")
            shutil.copytree(source, Path(self.build_lib) / "kube_kitchen_files" / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildWithServedFiles})
