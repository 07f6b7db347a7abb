"""Where this copy of Kube Kitchen lives: a checkout (`make run`) or an installed package
(`pip install .` / `pipx install .`, the `kube-kitchen` command).

Guarantees:
- `in_checkout()` is true when the repository's `manage.py` sits beside the `control` package.
- `shipped(name)` is the folder the dashboard serves from (`templates`, `static`, `lessons`,
  `locale`): the checkout's own at the top level, else the copy the wheel carries in
  `kube_kitchen_files/` beside `control` (put there by `setup.py`'s build step).
- `default_data_dir()` is `$KK_DATA_DIR` when set; else `./data` of the checkout (as `make run`
  always had it), else the user's data directory (`platformdirs`: ~/Library/Application Support
  on macOS, ~/.local/share on Linux and WSL): never a folder inside site-packages.
- `manage_command()` starts Django's command line in a child process the same way in both:
  `python manage.py` in a checkout, `python -m control` when installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from control import config

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the checkout, or site-packages
SHIPPED = ("templates", "static", "lessons", "locale")
FILES_PACKAGE = "kube_kitchen_files"
APP_NAME = "kube-kitchen"


def in_checkout() -> bool:
    return (PACKAGE_ROOT / "manage.py").is_file()


def shipped(name: str) -> Path:
    """The folder `name` (one of SHIPPED) this copy serves from."""
    if name not in SHIPPED:
        raise ValueError(f"{name!r} is not one of the shipped folders {SHIPPED}")
    here = PACKAGE_ROOT / name
    if in_checkout() or not (PACKAGE_ROOT / FILES_PACKAGE / name).is_dir():
        return here
    return PACKAGE_ROOT / FILES_PACKAGE / name


def default_data_dir() -> Path:
    """The data folder when none is named (see the module's guarantees)."""
    named = config.given("KK_DATA_DIR")
    if named:
        return Path(named)
    if in_checkout():
        return PACKAGE_ROOT / "data"
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False)


def manage_command() -> list[str]:
    """argv that runs one of our management commands in a child process."""
    if in_checkout():
        return [sys.executable, str(PACKAGE_ROOT / "manage.py")]
    return [sys.executable, "-m", "control"]
