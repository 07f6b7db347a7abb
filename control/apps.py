"""App config for the cluster: wires the bootstrap to migrate."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ControlConfig(AppConfig):
    name = "control"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from control.bootstrap import on_post_migrate

        post_migrate.connect(on_post_migrate, sender=self)
