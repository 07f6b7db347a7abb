"""The dashboard's URLs, for `control.urls` to include at the root. Static files are served here
too (the dashboard is one Daphne process with the hub; there is no separate web server)."""

from django.contrib.staticfiles.views import serve
from django.urls import include, path, re_path

from dashboard import join, lesson_views, login, pod_detail, timeline, views

app_name = "dashboard"

urlpatterns = [
    path("", views.index, name="index"),
    path("login/", login.login_view, name="login"),
    path("logout/", login.logout_view, name="logout"),
    path("session/token/", login.session_token, name="session_token"),
    path("join/", join.join, name="join"),
    path("join/qr.svg", join.qr, name="join_qr"),
    path("join/release/", join.release, name="join_release"),
    path("join/<str:code>/kubeconfig", join.kubeconfig, name="join_kubeconfig"),
    path("apply/", views.apply, name="apply"),
    path("actions/<slug:name>/", views.action, name="action"),
    path("drain/<str:node>/", views.drain, name="drain"),
    path("traffic/", views.traffic, name="traffic"),
    path("proxyrules/<str:node>/", views.proxy_rules, name="proxy_rules"),
    path("pods/<str:namespace>/<str:name>/", pod_detail.pod_detail, name="pod_detail"),
    path("lessons/", lesson_views.lesson_list, name="lessons"),
    path("lessons/namespace/", lesson_views.lesson_namespace, name="lesson_namespace"),
    path("lessons/progress/", lesson_views.lesson_progress_json, name="lesson_progress"),
    path("lessons/<slug:lesson_id>/<int:number>/", lesson_views.lesson_step, name="lesson_step"),
    path("lessons/<slug:lesson_id>/<int:number>/check/", lesson_views.lesson_check, name="lesson_check"),
    path("lessons/<slug:lesson_id>/<int:number>/do/", lesson_views.lesson_act, name="lesson_act"),
    path("timeline/at/", timeline.at, name="timeline_at"),
    path("timeline/changes/", timeline.changes, name="timeline_changes"),
    path("timeline/recording/", timeline.record, name="timeline_recording"),
    path("i18n/", include("django.conf.urls.i18n")),
    re_path(r"^static/(?P<path>.*)$", serve, {"insecure": True}),
]
