"""The ASGI entry point: `daphne control.asgi:application`, `runhub` and Django's ASGI_APPLICATION
(`manage.py runserver`) all import this module.

Guarantees: importing it sets Django up, installs every Daphne/Twisted adjustment of
`control.serving` (once per process, `control.serving.install`) and exposes the dispatcher
`control.serving.asgi.application` as `application` (and `ServedLifespan`, for `runhub`): whichever
way the hub is started, it is served the same way. This is the one place `install()` is called.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from control import serving  # noqa: E402
from control.serving.asgi import ServedLifespan, application  # noqa: E402  (sets Django up)

serving.install()

__all__ = ["ServedLifespan", "application"]
