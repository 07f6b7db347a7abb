"""Every environment variable Kube Kitchen reads: one table, and the only code that reads them.

`control.settings` is Django's settings module; it designates this module (pure: the standard
library only, so kinds, spokes, the dashboard and bench can all use it) as the one home of the
`KK_*` names. Guarantees:
- `SETTINGS` lists each variable once: its name, its default (and its default at the workshop pace,
  `KK_PACE=workshop`, where that differs), what it means and who reads it. The README's
  configuration table is rendered from it (`readme_table()`; `python -m control.config --readme`
  rewrites that part of the README, and tests/test_config.py fails when the two disagree).
- `text(name, env)` / `value(name, env)` read a variable at the moment they are called, never at
  import: from `env` when given (a component's start-up mapping, a test's dict), else from the
  process environment. An unset or empty variable is its default (the pace's). A name missing from
  the table is a KeyError, so nothing is read that is not documented; a value that does not parse
  is a ValueError naming the variable.
- `environment()` is a snapshot of the process's variables of the table, the mapping a component
  reads once at start (`KubeletConfig.from_env`, `Timings.from_env`, `addresses.setting`).
- Outside this module nothing reads `os.environ`/`os.getenv` for a `KK_` name, nor looks a `KK_`
  name up in any mapping (tests/test_config.py walks control, dashboard, bench and tests for it).
  Setting a variable for a child process (`{**os.environ, "KK_DATA_DIR": ...}`) is not reading it.

Decision (per-component mappings): the kubelet, the node timings and the node-address mode are read
from a mapping once, when the component starts (as upstream's components parse their flags once),
not through Django's settings: spokes may run without the hub's settings, and a test passes a dict
instead of changing the process's environment. The mapping is looked up only through `text`, so
the names, defaults and meanings stay in this one table.
Hub-side values that tests change at run time (`settings.KK_BOOKMARK_INTERVAL`, ...) stay Django
settings, set from this table when Django loads `control.settings`, and are read lazily through
`django.conf.settings` by the modules that use them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

HUB, SPOKES, DASHBOARD = "hub", "spokes", "dashboard"


@dataclass(frozen=True)
class Setting:
    name: str
    default: str  # the text an unset variable stands for ("" = none)
    meaning: str
    readers: str  # who reads it: the module or process, for a reader of the code
    parse: Callable[[str], Any] = str
    workshop: str | None = None  # the default at KK_PACE=workshop, when it differs
    shown: str | None = None  # how the README states the default, when the text alone would mislead


def _on_off(text: str) -> str:
    value = text.strip().lower()
    if value not in ("on", "off", "0", "1", "true", "false", "yes", "no"):
        raise ValueError("must be on or off")
    return value


def _positive(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def checked(text: str) -> Any:
        number = parse(text)
        if number <= 0:
            raise ValueError("must be more than 0")
        return number
    return checked


def _port(text: str) -> int:
    number = int(text)
    if not 1 <= number <= 65535:
        raise ValueError("must be a port between 1 and 65535")
    return number


_S = Setting
SETTINGS: tuple[Setting, ...] = (
    # where things are kept
    _S("KK_DATA_DIR", "", "folder of the SQLite file, tokens, codes, keys, kubeconfigs (runcluster sets it for its "
       "children)", "control.installation, every process", shown="`./data` (installed: the user's data directory)"),
    _S("KK_SQLITE_PATH", "", "the SQLite database file", "control.settings", shown="`<data>/cluster.sqlite3`"),
    _S("KK_SQLITE_TEST_PATH", "", "the tests' SQLite database file", "control.settings (tests)",
       shown="`<data>/test-<pid>.sqlite3`"),
    _S("DATABASE_URL", "", "`postgres://user@host:port/db` for the scale-out shape", "control.settings"),
    _S("KK_PG_POOL_SIZE", "20", "on PostgreSQL, the most connections one hub process opens (its pool; the store's "
       "thread keeps one, each dashboard request borrows one): with several hubs keep their sum under the "
       "server's `max_connections`", "control.settings", _positive(int)),
    _S("KK_PG_TEST_DB", "kk_test", "the tests' PostgreSQL database", "control.settings (tests)"),
    _S("REDIS_URL", "", "Redis channel layer instead of the in-memory one", "control.settings"),
    _S("KK_KUBELET_DATA_DIR", "", "the kubelet's state directory (a claim's volume is `<it>/volumes/<pv name>/`)",
       "control.kubelet.config", shown="`<data>/kubelet`"),
    # the hub's store and watch
    _S("KK_LOG_MAX_ENTRIES", "100000", "the version log's window in entries (older entries are compacted, except "
       "each object's newest, as etcd keeps each key's)", "control.settings → storage.feed", _positive(int)),
    _S("KK_LOG_MAX_AGE", "300", "the version log's window in seconds", "control.settings → storage.feed",
       _positive(float)),
    _S("KK_COMPACT_INTERVAL", "30", "seconds between compactions (from the hub's start, before any request)",
       "control.settings → storage.feed", _positive(float)),
    _S("KK_POLL_INTERVAL", "1.0", "seconds between a hub's looks for writes of other hub processes without a hint",
       "control.settings → storage.feed", _positive(float)),
    _S("KK_FEED_MAX_BYTES", str(64 * 1024 * 1024), "the change feed's memory bound in bytes; older changes are "
       "read from the log", "control.settings → storage.feed", _positive(int)),
    _S("KK_BOOKMARK_INTERVAL", "60", "seconds between watch bookmarks, when asked for",
       "control.settings → api.watch", _positive(float)),
    # the hub's front
    _S("KK_SECRET_KEY", "kube-kitchen-is-a-teaching-cluster-not-a-vault", "Django's SECRET_KEY (signs the "
       "dashboard's sessions and CSRF tokens)", "control.settings", shown="a fixed one, in the source"),
    _S("KK_DEBUG", "", "`1`: Django's DEBUG", "control.settings"),
    _S("KK_LOG_LEVEL", "WARNING", "the level of the `control` logger (`INFO` shows more)", "control.settings"),
    _S("KK_ALLOWED_HOSTS", "", "extra names the hub answers to, comma-separated (`kitchen.lan,.example.org`)",
       "control.settings → serving.hosts"),
    _S("KK_AUTHENTICATION", "on", "authentication and RBAC on the API (`off`: everyone is `system:masters`)",
       "control.settings → control.auth", _on_off),
    _S("KK_NODE_NETWORK", "127.0.0.0/8,::1/128", "the only addresses the hub contacts a node's kubelet or "
       "kube-proxy at", "control.api.node_address"),
    _S("KK_SERVICE_CIDR", "10.96.0.0/16", "where Service cluster IPs come from",
       "control.kinds.network (hub, bootstrap)"),
    _S("KK_LOAD_BALANCER_POOL", "172.18.255.0/24", "where load-balancer IPs come from",
       "control.kinds.network (servicelb controller)"),
    _S("KK_INLINE_JSON_BYTES", str(256 * 1024), "JSON bodies over this many bytes (and all YAML but JSON "
       "text up to this size) are decoded in a worker process", "control.settings → api.bodies", _positive(int)),
    _S("KK_DECODE_WORKERS", "1", "worker processes that decode large bodies", "control.settings → control.offloop",
       _positive(int)),
    _S("KK_YAML_MAX_DEPTH", "100", "the deepest YAML body decoded", "control.settings → api.bodies, dashboard",
       _positive(int)),
    _S("KK_YAML_MAX_NODES", "1000000", "the most YAML nodes (aliases expanded) decoded",
       "control.settings → api.bodies, dashboard", _positive(int)),
    _S("KK_BYTES_PER_SEAT", str(512 * 1024), "a decoded body holds one fairness seat more per this many bytes",
       "control.settings → control.seats", _positive(int)),
    _S("KK_FAIR_INFLIGHT_PER_USER", "10", "requests in flight per user (system level: 4×)",
       "control.settings → control.seats", _positive(int)),
    _S("KK_FAIR_QUEUE_LENGTH", "50", "requests of one user that then wait in a queue", "control.settings → control.seats", int),
    _S("KK_FAIR_QUEUE_WAIT", "1.0", "seconds a queued request waits before a 429", "control.settings → control.seats",
       float),
    _S("KK_WATCH_MAX_BACKLOG_BYTES", str(4 * 1024 * 1024), "a watcher this many bytes behind in reading, for KK_WATCH_STALL_SECONDS, is dropped (it relists)",
       "control.settings → api.app", _positive(int)),
    _S("KK_WATCH_STALL_SECONDS", "10", "how long a watcher may stay KK_WATCH_MAX_BACKLOG_BYTES behind",
       "control.settings → api.app", _positive(float)),
    _S("KK_HTTP_HEADER_TIMEOUT", "32", "seconds within which a request's line and headers must arrive",
       "control.settings → control.serving", _positive(float)),
    _S("KK_HTTP_IDLE_TIMEOUT", "90", "seconds after which a silent connection is closed (not a streaming watch)",
       "control.settings → control.serving", _positive(float)),
    _S("KK_WEBSOCKET_DECISION_TIMEOUT", "15", "seconds the hub may take to accept or refuse a WebSocket upgrade "
       "(exec, attach, port-forward, the dashboard's); then it answers 429 with Retry-After (fairness's wait limit)",
       "control.settings → control.serving", _positive(float)),
    _S("KK_STREAM_IDLE_SECONDS", "14400", "an exec, attach or port-forward stream with nothing relayed for this many "
       "seconds is closed (4 h, the kubelet's `--streaming-connection-idle-timeout`)", "control.api.streams",
       _positive(float)),
    # the dashboard
    _S("KK_JOIN", "names", "the join page: `names` lists the attendees (a name is claimed once), `codes` only takes "
       "a code; `runcluster --join`", "control.settings → dashboard.join"),
    _S("KK_HUB_URL", "", "where the dashboard reaches the hub", "control.settings → dashboard.hub",
       shown="the address the browser's request arrived on"),
    _S("KK_HUB_TOKEN", "", "the dashboard's token at that hub", "control.settings → dashboard.hub",
       shown="`kubekitchen:dashboard`'s line of `tokens.csv`"),
    # every process of a cluster
    _S("KK_PACE", "kubernetes", "`workshop` turns node heartbeats, eviction and back-offs from minutes into seconds "
       "(the defaults marked workshop); `runcluster --pace`", "runcluster, client.timings, kubelet.config"),
    _S("KK_TOKEN", "", "a spoke's bearer token", "control.client, runcomponent, control.auth.tokenfile",
       shown="its identity's line of `tokens.csv`"),
    _S("KK_LOG_VERBOSE", "", "set by the supervisor for a component run as a static pod: its INFO lines go to the "
       "pod's log (`kubectl logs -n kube-system ...`)", "runcomponent"),
    _S("KK_PARENT_PID", "", "set by runcluster: a hub or spoke stops when that process is gone",
       "runhub, runcomponent"),
    _S("KK_NODE_ADDRESSES", "auto", "where the nodes listen: `own` (127.0.1.N), `loopback` (all on 127.0.0.1, ports "
       "of their own, as on macOS), `auto` (own where this machine can bind them); `runcluster --node-addresses`",
       "runcluster, kubelet.addresses"),
    _S("KK_INGRESS_HTTP_PORT", "80", "where the ingress controller serves HTTP on node-1's address (taken: 8080, then "
       "a free port; the port taken is in the Ingresses' status)", "control.frontdoor", _port),
    _S("KK_INGRESS_HTTPS_PORT", "443", "where the ingress controller serves HTTPS (taken: 8443, then a free port)",
       "control.frontdoor", _port),
    _S("KK_SCHEDULER_WORKERS", "32", "bindings the scheduler makes at once", "control.scheduler", _positive(int)),
    # the gateway controller (control.gateway): where a Gateway's HTTP listeners are served on this machine
    _S("KK_GATEWAY_ADDRESS", "", "the address the gateway controller serves each Gateway's listeners on instead "
       "of node-1's own (127.0.1.1; 127.0.0.1 in loopback mode), which pods reach too; `0.0.0.0` serves the LAN "
       "as well", "control.gateway"),
    _S("KK_GATEWAY_PORT_OFFSET", "30000", "a listener's port is served on itself where it can be bound, else on "
       "this offset plus its port (`80` on `30080`), else on a free port; the one taken is in the Gateway's "
       "annotation `kubekitchen.dev/listeners`", "control.gateway", int),
    # the node lifecycle (client.timings: kubelets, the node lifecycle controller, the hub's pod defaults)
    _S("KK_LEASE_RENEW", "10", "seconds between a kubelet's Lease renewals", "client.timings", float, "3"),
    _S("KK_LEASE_DURATION", "40", "the Lease's leaseDurationSeconds", "client.timings", float, "12"),
    _S("KK_NODE_GRACE", "50", "a node whose Lease is older than this many seconds is NotReady (Unknown)",
       "client.timings", float, "15"),
    _S("KK_NODE_MONITOR", "5", "seconds between the node lifecycle controller's looks", "client.timings", float, "1"),
    _S("KK_TOLERATION_SECONDS", "300", "default tolerationSeconds for not-ready/unreachable NoExecute",
       "client.timings", float, "5"),
    _S("KK_STATUS_REPORT", "300", "a kubelet writes its node status at least this often (seconds)",
       "client.timings", float, "60"),
    _S("KK_STATUS_CHECK", "10", "seconds between a kubelet's comparisons of its node status with the Node's",
       "client.timings", float, "1"),
    _S("KK_CPU_WINDOW", "10", "the kubelet's CPU averaging window (seconds)", "client.timings", float, "3"),
    _S("KK_HPA_SYNC", "15", "the HPA controller's sync period (seconds)", "client.timings", float, "2"),
    _S("KK_QUOTA_SYNC", "30", "seconds between the resourcequota controller's recounts of every quota (pod changes "
       "are counted at once)", "client.timings", float, "5"),
    # the kubelet's simulated runtime (kubelet.config)
    _S("KK_KUBELET_WORKERS", "16", "pods a kubelet syncs at once", "kubelet.config", _positive(int)),
    _S("KK_START_DELAY", "0.1-0.3", "seconds a container spends in ContainerCreating: `0.2` or a range `LOW-HIGH`",
       "kubelet.config"),
    _S("KK_CRASH_BACKOFF", "10:300", "crash-loop back-off, `BASE` or `BASE:CAP` seconds (a CAP left out is 30 × BASE)",
       "kubelet.config", workshop="2:60"),
    _S("KK_CRASH_BACKOFF_RESET", "600", "seconds of running after which the back-off starts over", "kubelet.config",
       _positive(float)),
    _S("KK_IMAGE_BACKOFF", "10:300", "the image pull back-off, `BASE` or `BASE:CAP` seconds", "kubelet.config",
       workshop="2:60"),
    _S("KK_IMAGE_PULL_SECONDS", "0.5", "how long a simulated pull takes", "kubelet.config", float, "0.2"),
    _S("KK_TERMINATION_SECONDS", "1",
       "a deleted pod's running containers run on (exec, logs) for min(grace period, this) seconds, handling SIGTERM, "
       "then stop", "kubelet.config", float),
    _S("KK_LOG_INTERVAL", "2", "seconds between the lines a running container prints", "kubelet.config", float),
    _S("KK_SYNC_PERIOD", "10", "seconds between the kubelet's retries of a pod that cannot start yet",
       "kubelet.config", float, "2"),
    _S("KK_NODE_CPU", "4", "the node's CPU capacity", "kubelet.config"),
    _S("KK_NODE_MEMORY", "8Gi", "the node's memory capacity", "kubelet.config"),
    _S("KK_NODE_PODS", "110", "the node's pod capacity", "kubelet.config"),
    # for developers: benchmarks and tests
    _S("KK_BENCH_RUNHUB", "", "a script that serves instead of `manage.py runhub` in benchmarks", "bench/common.py"),
    _S("KK_BENCH_TOKEN", "", "set by a benchmark for the load process it starts: the token it sends",
       "bench (fairness, yaml_flood, watch_fanout)"),
    _S("KK_BENCH_CODE", "", "set by a benchmark for the load process it starts: the code it logs in with",
       "bench/yaml_flood.py"),
    _S("KK_REQUIRE_POSTGRES", "", "`1`: the PostgreSQL tests fail instead of skipping when no server is there",
       "tests"),
    _S("KK_WALK_LESSONS", "", "lesson ids, comma-separated: the browser walk-through walks only these (all when unset)",
       "tests/dashboard/test_browser_walkthrough.py"),
    _S("KK_UPDATE_README_SHOT", "", "`1`: the browser walk-throughs refresh the README's screenshots", "tests/dashboard"),
    _S("KK_UPDATE_PROTOBUF_FIXTURES", "", "`1`: the protobuf tests rewrite their fixtures", "tests/api, tests/e2e/test_drain.py"),
)
BY_NAME: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}
# Django settings whose names look like variables but that no environment sets.
NOT_ENVIRONMENT = frozenset({
    "KK_MAX_BODY_BYTES",  # a constant of control.settings (3 MiB, as kube-apiserver's limit)
    "KK_BIND_HOST",  # where runhub listens, set by runhub --addr for the dashboard
})


def _environment(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def default(name: str, env: Mapping[str, str] | None = None) -> str:
    """The text an unset `name` stands for, at the pace `env` sets."""
    setting = BY_NAME[name]
    if setting.workshop is not None and _environment(env).get("KK_PACE", "").strip().lower() == "workshop":
        return setting.workshop
    return setting.default


def given(name: str, env: Mapping[str, str] | None = None) -> str:
    """What the environment says of `name`, "" when it is unset (no default)."""
    BY_NAME[name]  # KeyError: not in the table, so not to be read
    return _environment(env).get(name, "").strip()


def text(name: str, env: Mapping[str, str] | None = None) -> str:
    """The variable's text, else its default."""
    return given(name, env) or default(name, env)


def value(name: str, env: Mapping[str, str] | None = None) -> Any:
    """The variable parsed as the table says (int, float, ...); ValueError naming it when it does not parse."""
    raw = text(name, env)
    try:
        return BY_NAME[name].parse(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r}: {exc}") from None


def environment() -> dict[str, str]:
    """The process's variables of the table, now (a component's start-up mapping)."""
    return {name: os.environ[name] for name in BY_NAME if name in os.environ}


def _default_shown(setting: Setting) -> str:
    shown = setting.shown or (f"`{setting.default}`" if setting.default else "—")
    return f"{shown} (workshop: `{setting.workshop}`)" if setting.workshop is not None else shown


def readme_table() -> str:
    """The README's configuration table, rendered from SETTINGS."""
    rows = ["| variable | default | meaning | read by |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {_default_shown(s)} | {s.meaning} | {s.readers} |" for s in SETTINGS]
    return "\n".join(rows) + "\n"


BEGIN = "<!-- settings table: generated from control/config.py by `python -m control.config --readme` -->\n"
END = "<!-- end of the settings table -->\n"


def with_table(readme: str) -> str:
    """`readme` with the text between BEGIN and END replaced by `readme_table()`."""
    head, found, rest = readme.partition(BEGIN)
    if not found or END not in rest:
        raise ValueError("the README has no settings table markers")
    return head + BEGIN + readme_table() + END + rest.partition(END)[2]


def main(argv: list[str]) -> int:
    if argv == ["--readme"]:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        readme.write_text(with_table(readme.read_text()))
        return 0
    sys.stdout.write(readme_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
