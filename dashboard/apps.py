"""The dashboard's Django app: the page, its forms and actions, and its websocket consumers."""

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Kube Kitchen dashboard"
