"""Django settings for the cluster.

Guarantees: the embedded default needs no configuration (SQLite in `KK_DATA_DIR`, in-memory
channel layer); `DATABASE_URL=postgres://...` and `REDIS_URL=redis://...` switch to the
scale-out shape without code changes. Every environment variable is named, defaulted, documented
and read in `control.config` (its one table); this module turns the hub's into Django settings,
once, when Django loads it, and modules read them lazily through `django.conf.settings`.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from control import config, datafolder
from control.installation import default_data_dir, shipped

BASE_DIR = Path(__file__).resolve().parent.parent
# Owner-only from the start (0700; a looser existing folder is tightened with a warning): it holds
# the database, the token file, the keys and the kubeconfigs. `KK_DATA_DIR`, else `./data` of a
# checkout, else (installed) the user's data directory (control.installation).
DATA_DIR = datafolder.prepare(default_data_dir())

SECRET_KEY = config.text("KK_SECRET_KEY")
DEBUG = config.text("KK_DEBUG") == "1"
# The Host headers answered (DNS-rebinding defence, control.serving.hosts): localhost names, the names in
# KK_ALLOWED_HOSTS (comma-separated, ".example.org" for a domain and its subdomains), and the bind
# address `runhub --addr` adds at start. Any other Host gets a 400 on every path.
ALLOWED_HOSTS = ["localhost", ".localhost", "127.0.0.1", "[::1]",
                 *[name.strip() for name in config.text("KK_ALLOWED_HOSTS").split(",") if name.strip()]]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.staticfiles",
    "django.contrib.sessions",  # the dashboard's logins (dashboard.login), in the database
    "channels",
    "control",
    "dashboard.apps.DashboardConfig",
]

# The dashboard's pages and forms (the Kubernetes API paths never reach Django: control.asgi sends
# them to the hub's own app, which has no CSRF, as kube-apiserver has none). The page sends the
# CSRF token in a header on every htmx request (hx-headers on <body>, as django-htmx recommends).
MIDDLEWARE: list[str] = [
    # Django's own security, session, CSRF and clickjacking middleware, their hooks run on the event
    # loop instead of a thread hop each (dashboard.middleware)
    "dashboard.middleware.Security",
    "dashboard.middleware.Session",
    "dashboard.middleware.Csrf",
    "dashboard.middleware.XFrameOptions",
    "dashboard.security.ContentSecurityPolicy",
]
X_FRAME_OPTIONS = "DENY"
# A login lasts a working day, in an HttpOnly cookie the page's scripts cannot read (SameSite=Lax).
SESSION_COOKIE_AGE = 12 * 3600
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_NAME = "kk_session"
# The CSRF token reaches htmx through the page (hx-headers), never through script reading the cookie.
CSRF_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Strict"
# The join page: "names" lists the attendees (a name is claimed once), "codes" only takes a code.
KK_JOIN = config.text("KK_JOIN")

ROOT_URLCONF = "control.urls"
ASGI_APPLICATION = "control.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [shipped("templates")],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]


def _database_from_url(url: str) -> dict:
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"DATABASE_URL scheme {parsed.scheme!r} is not supported (use postgres://)")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": parsed.hostname or "",
        "PORT": str(parsed.port or ""),
        # A pool per hub process, not a connection per thread: Django's ASGI handler runs each
        # dashboard request on a thread of its own, and with persistent connections each of those
        # threads left a connection open until it was collected, so three hubs in a room of 30
        # ran PostgreSQL out of its 100 clients ("too many clients already"). With the pool a
        # request's connection goes back at the request's end (CONN_MAX_AGE 0 means exactly that
        # with a pool); the store's own thread keeps the one it took.
        "CONN_MAX_AGE": 0,
        "OPTIONS": {"pool": {"min_size": 2, "max_size": config.value("KK_PG_POOL_SIZE"), "timeout": 30}},
        "TEST": {"NAME": config.text("KK_PG_TEST_DB")},
    }


if config.given("DATABASE_URL"):
    DATABASES = {"default": _database_from_url(config.given("DATABASE_URL"))}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": config.given("KK_SQLITE_PATH") or str(DATA_DIR / "cluster.sqlite3"),
            "CONN_MAX_AGE": None,
            "OPTIONS": {
                # Writers queue on BEGIN IMMEDIATE instead of failing with "database is locked"
                # when a read transaction tries to upgrade.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                # WAL lets readers run beside the writer; synchronous=FULL makes every
                # acknowledged commit survive a crash of the process or the machine.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
                # The file is made 0600 before SQLite opens it; its -wal/-shm/-journal take that mode.
                "factory": datafolder.PrivateSQLiteConnection,
            },
            # A file, not memory: tests start writer processes that share the test database.
            # One file per test run, so parallel runs never share it.
            "TEST": {"NAME": config.given("KK_SQLITE_TEST_PATH") or str(DATA_DIR / f"test-{os.getpid()}.sqlite3")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# channels_redis waits for a page's messages with BZPOPMIN of 5 s (its brpop_timeout); redis-py 8
# reads every reply within socket_timeout, 5 s by default, so an idle page's wait could end in
# "Timeout reading from ..." and its consumer die (redis/redis-py#4091). The reads get 15 s: more
# than the wait, and a Redis that stopped answering is still noticed.
REDIS_SOCKET_TIMEOUT = 15.0


def redis_channel_layer(url: str, **config_: object) -> dict:
    """The Channels layer on the Redis at `url` (extra CONFIG keys, e.g. a prefix, in `config_`)."""
    return {"BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": url, "socket_timeout": REDIS_SOCKET_TIMEOUT}], **config_}}


if config.given("REDIS_URL"):
    CHANNEL_LAYERS = {"default": redis_channel_layer(config.given("REDIS_URL"))}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "control.serving.channel_layer.InProcessChannelLayer"}}

STATIC_URL = "static/"
STATICFILES_DIRS = [shipped("static")]

# The dashboard's catalogues (English source, Korean translation) live at the top level; the
# compiled .mo is kept in the repository and shipped, so running needs no gettext.
LOCALE_PATHS = [shipped("locale")]
LANGUAGES = [("en", "English"), ("ko", "한국어")]
USE_I18N = True
# Where the dashboard reaches the hub; empty = the address the browser's request arrived on.
KK_HUB_URL = config.text("KK_HUB_URL")
# The dashboard's token at that hub; empty = `kubekitchen:dashboard`'s line of the token file.
KK_HUB_TOKEN = config.text("KK_HUB_TOKEN")
# Authentication and RBAC on the hub's API (control.auth): "on" (default) or "off".
KK_AUTHENTICATION = config.value("KK_AUTHENTICATION")

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"

# The version log's window (the etcd compaction role): entries are kept while they are among
# the newest KK_LOG_MAX_ENTRIES and younger than KK_LOG_MAX_AGE seconds.
KK_LOG_MAX_ENTRIES = config.value("KK_LOG_MAX_ENTRIES")
KK_LOG_MAX_AGE = config.value("KK_LOG_MAX_AGE")
KK_COMPACT_INTERVAL = config.value("KK_COMPACT_INTERVAL")
# How often a hub process looks at the log for writes made by other processes, when no hint came.
KK_POLL_INTERVAL = config.value("KK_POLL_INTERVAL")
KK_MAX_BODY_BYTES = 3 * 1024 * 1024
# Decoding a body (control.api.bodies): YAML, and JSON over KK_INLINE_JSON_BYTES, in
# KK_DECODE_WORKERS worker processes, within a depth and node (aliases expanded) budget.
KK_INLINE_JSON_BYTES = config.value("KK_INLINE_JSON_BYTES")
KK_DECODE_WORKERS = config.value("KK_DECODE_WORKERS")
KK_YAML_MAX_DEPTH = config.value("KK_YAML_MAX_DEPTH")
KK_YAML_MAX_NODES = config.value("KK_YAML_MAX_NODES")
# Such a body holds one fairness seat more per KK_BYTES_PER_SEAT of it (control.api.fairness).
KK_BYTES_PER_SEAT = config.value("KK_BYTES_PER_SEAT")
# The change feed's memory bound in bytes (besides its count): past it the oldest changes are read
# from the log instead (100 updates of a 1.5 MiB object must not pin 300 MB).
KK_FEED_MAX_BYTES = config.value("KK_FEED_MAX_BYTES")
KK_BOOKMARK_INTERVAL = config.value("KK_BOOKMARK_INTERVAL")
# Fairness (control.api.fairness): requests in flight per user (the system level gets four times as
# many), then a queue of KK_FAIR_QUEUE_LENGTH waiting at most KK_FAIR_QUEUE_WAIT seconds, then 429.
KK_FAIR_INFLIGHT_PER_USER = config.value("KK_FAIR_INFLIGHT_PER_USER")
KK_FAIR_QUEUE_LENGTH = config.value("KK_FAIR_QUEUE_LENGTH")
KK_FAIR_QUEUE_WAIT = config.value("KK_FAIR_QUEUE_WAIT")
# Slow clients (control.serving.timeouts, kube-apiserver's ReadHeaderTimeout and IdleTimeout): a
# request's line and headers must arrive within KK_HTTP_HEADER_TIMEOUT seconds of its first byte,
# and a connection on which nothing arrives for KK_HTTP_IDLE_TIMEOUT seconds, outside an answer, is closed.
KK_HTTP_HEADER_TIMEOUT = config.value("KK_HTTP_HEADER_TIMEOUT")
KK_HTTP_IDLE_TIMEOUT = config.value("KK_HTTP_IDLE_TIMEOUT")
# A WebSocket upgrade the hub has not accepted or refused within this many seconds is answered 429 with
# Retry-After (control.serving.websocket_denial), never reset.
KK_WEBSOCKET_DECISION_TIMEOUT = config.value("KK_WEBSOCKET_DECISION_TIMEOUT")
# A watcher that stops reading (control.api.app): once more than KK_WATCH_MAX_BACKLOG_BYTES of its
# stream wait unsent for KK_WATCH_STALL_SECONDS, its connection is dropped and its client relists.
KK_WATCH_MAX_BACKLOG_BYTES = config.value("KK_WATCH_MAX_BACKLOG_BYTES")
KK_WATCH_STALL_SECONDS = config.value("KK_WATCH_STALL_SECONDS")
# The hub enforces KK_MAX_BODY_BYTES itself, with a Status; Django (the dashboard's forms) refuses
# a form body over three times that (URL-encoding triples YAML at worst), the manifest view the rest.
DATA_UPLOAD_MAX_MEMORY_SIZE = 3 * KK_MAX_BODY_BYTES

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "control": {"handlers": ["console"], "level": config.text("KK_LOG_LEVEL")},
    },
}
