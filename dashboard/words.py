"""The page's words: each term twice, as Kubernetes names it and as the restaurant story of the
seed articles tells it, in the active language (English or Korean).

Guarantees: `terms()` returns every word the page's script draws with, evaluated in the language
active at the call (Django i18n; the catalogue is `locale/ko/LC_MESSAGES/django.po`).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from dashboard import detail_words

TERMS: dict[str, tuple[Any, Any]] = {
    # key: (as Kubernetes names it, as the restaurant story tells it)
    "hub": (_("API server"), _("Waiter")),
    "store": (_("etcd (store)"), _("Notepad")),
    "kube-controller-manager": (_("controller-manager"), _("Cook: keeps every count")),
    "kube-scheduler": (_("scheduler"), _("Cook: picks a stove")),
    "kubelet": (_("kubelet"), _("Stove cook")),
    "kubectl": (_("kubectl"), _("Guest (kubectl)")),
    "python-client": (_("Python client"), _("Guest (Python)")),
    "dashboard": (_("dashboard"), _("This page (a guest)")),
    "dashboard/wire": (_("dashboard: wire view"), _("Listener (wire view)")),
    "dashboard/second-writer": (_("dashboard: second writer"), _("Another waiter")),
    "supervisor": (_("supervisor"), _("Kitchen manager")),
    "unknown": (_("unknown client"), _("Unknown guest")),
    "controllers": (_("replicaset · deployment · endpoints · garbage collector · namespace · node lifecycle · autoscaler · load balancer"),
                    _("counts dishes · follows orders · tells the counter · clears plates")),
    "pod": (_("Pod"), _("Dish")),
    "pods": (_("Pods"), _("Dishes")),
    "node": (_("Node"), _("Stove")),
    "nodes": (_("Nodes and their pods"), _("Stoves and their dishes")),
    "unscheduled": (_("Not scheduled yet"), _("Waiting for a stove")),
    "deployments": (_("Deployments and ReplicaSets"), _("Orders and their batches")),
    "deployment": (_("Deployment"), _("Order")),
    "replicaset": (_("ReplicaSet"), _("Batch")),
    "services": (_("Services and endpoints"), _("Serving counters and ready plates")),
    "service": (_("Service"), _("Serving counter")),
    "endpoints": (_("Endpoints"), _("Ready plates")),
    "log": (_("Version log"), _("The notepad, line by line")),
    "manifest": (_("Manifest (desired state)"), _("Order slip (what the guest wants)")),
    "apply": (_("Apply"), _("Hand the slip to the waiter")),
    "request": (_("request"), _("a cook or guest speaks to the waiter")),
    "watch": (_("watch event"), _("the waiter tells a cook the order changed")),
    "requests": (_("requests"), _("spoken")),
    "watches": (_("watch events"), _("told")),
    "errors": (_("errors"), _("refused")),
    "delete-pod": (_("Delete pod"), _("Drop the pasta")),
    "crash": (_("Crash container"), _("Burn the dish")),
    "cordon": (_("Cordon"), _("Close the stove")),
    "uncordon": (_("Uncordon"), _("Open the stove")),
    "stop": (_("Stop"), _("Send home")),
    "start": (_("Start"), _("Call back")),
    "stop-kubelet": (_("Stop kubelet"), _("Send the cook home")),
    "start-kubelet": (_("Start kubelet"), _("Call the cook back")),
    "scale-up": (_("Scale +1"), _("One more")),
    "scale-down": (_("Scale −1"), _("One fewer")),
    "desired": (_("desired"), _("ordered")),
    "current": (_("current"), _("cooking")),
    "ready": (_("ready"), _("garnished")),
    "revision": (_("revision"), _("slip line")),
    "wire": (_("The wire: one watch stream, byte by byte"), _("Listening in: what the waiter says, word by word")),
    "kube-proxy": (_("kube-proxy"), _("Runner")),
    "proxy-rules": (_("kube-proxy rules (iptables)"), _("The runner's routes")),
    "traffic": (_("Traffic to a Service"), _("Guests at a serving counter")),
    "send": (_("Send"), _("Send guests")),
    "hpa": (_("HorizontalPodAutoscalers"), _("More cooks when it gets busy")),
    "replicas": (_("replicas"), _("cooks")),
    "custom": (_("Custom resources"), _("Order slips, dishes and cooks")),
    "line-cook": (_("line-cook (controller)"), _("Line cook")),
    "garnish-cook": (_("garnish-cook (controller)"), _("Garnish cook")),
    "jobs": (_("Jobs and CronJobs"), _("One-off dishes and the kitchen timer")),
    "job": (_("Job"), _("One-off dish")),
    "cronjob": (_("CronJob"), _("Kitchen timer")),
    "events": (_("Events"), _("What the cooks noted")),
    "failures": (_("Failed requests"), _("Refused by the waiter")),
    "story": (_("Every component talks only to the API server; users declare, controllers reconcile."),
              _("Everyone talks only through the waiter; the kitchen always completes the order — a dropped pasta is cooked again.")),
}

STATUS_WORDS: dict[str, tuple[Any, Any]] = {
    "Pending": (_("Pending"), _("Waiting for a stove")),
    "ContainerCreating": (_("ContainerCreating"), _("Cooking")),
    "Running": (_("Running"), _("Cooked")),
    "Ready": (_("Ready"), _("Garnished")),
    "CrashLoopBackOff": (_("CrashLoopBackOff"), _("Burnt again and again")),
    "Error": (_("Error"), _("Burnt")),
    "Completed": (_("Completed"), _("Served")),
    "Succeeded": (_("Succeeded"), _("Served")),
    "Failed": (_("Failed"), _("Burnt")),
    "Terminating": (_("Terminating"), _("Being cleared away")),
}

UI_STRINGS: dict[str, Any] = {
    "connected": _("live"),
    "connecting": _("connecting…"),
    "reloading": _("history expired (410): reloading the snapshot"),
    "hub-down": _("the hub does not answer; retrying"),
    "paused": _("paused"),
    "no-pods": _("no pods"),
    "not-ready": _("NotReady"),
    "cordoned": _("cordoned"),
    # the shell in the browser (static/dashboard/shell.js)
    "shell": _("Open a shell in this pod"),
    "shell-title": _("Shell in"),
    "shell-open": _("connected: type commands, `exit` to leave"),
    "shell-ended": _("session ended"),
    "shell-exit": _("exit code"),
    "shell-lost": _("the connection closed"),
    "shell-close": _("Close"),
    "stopped": _("stopped"),
    "running": _("running"),
    "restarts": _("restarts"),
    "bytes": _("bytes"),
    "chunk": _("chunk"),
    "no-endpoints": _("no endpoints"),
    "wire-open": _("Open the stream"),
    "wire-close": _("Close the stream"),
    "external": _("External IP"),
    "ports": _("Ports"),
    "selector": _("Selector"),
    "not-ready-endpoint": _("not ready"),
    "failed": _("failed"),
    "cpu": _("CPU utilisation"),
    "target": _("target"),
    "min": _("min"),
    "max": _("max"),
    "no-objects": _("no objects"),
    "cooks": _("Cooks:"),
    "not-seen": _("not seen yet"),
    "order": _("Order slip"),
    "no-orders": _("No order slips yet: place one."),
    "cooked": _("cooked"),
    "garnished": _("garnished"),
    "dropped": _("dropped on the floor"),
    "drop-dish": _("Drop the dish on the floor"),
    "dry-run": _("dry run"),
    "expected-before-create": _("expected (not found before create)"),
    "not-found-lookup": _("not found: an answer to a lookup, not an error"),
    "no-failures": _("No failed requests."),
    "no-events": _("No events yet."),
    "no-jobs": _("No Jobs or CronJobs yet."),
    "never": _("never"),
    "suspended": _("suspended"),
    "active": _("active"),
    "last-schedule": _("last scheduled"),
    "job-running": _("running"),
    "job-complete": _("complete"),
    "job-failed": _("failed"),
    "job-suspended": _("suspended"),
    # the stage bar (static/dashboard/timeline.js); {placeholders} are filled in by the page
    "tl-live": _("live"),
    "tl-paused": _("paused"),
    "tl-slow": _("slow motion {speed}"),
    "tl-replay": _("replay"),
    "tl-pause": _("Pause"),
    "tl-resume": _("Resume"),
    "tl-waiting": _("{n} waiting"),
    "tl-at": _("at revision {rv}, {time} — replay"),
    "tl-gone": _("The history before revision {oldest} is gone: the version log was compacted."),
    "tl-oldest": _("Show revision {oldest}, the oldest kept"),
    "tl-failed": _("The hub refused: {message}"),
    "tl-overflow": _("{n} held changes were too many to keep: the snapshot was loaded again."),
    "tl-exported": _("Recording saved: {n} changes."),
    "tl-not-recording": _("This file is not a Kube Kitchen recording ({why})."),
    "tl-other-version": _("This recording was made by another version of Kube Kitchen ({found}); this page plays {expected}."),
    "all-namespaces": _("all namespaces"),
    "stale-write": _("Stale write: read, let another client change it, then PUT the old read (409 Conflict)"),
    "relist-asking": _("watching again from revision {revision}…"),
    "relist-gone": _("ERROR {code} {reason}: {message} → relisting"),
    "relist-done": _("→ relisted: a snapshot at revision {revision}, watched from there."),
    "relist-kept": _("Revision {revision} is still in the hub's window: no 410 (nothing compacted yet); the changes after it came again and the page skipped the ones it held."),
}


def _pair(pair: tuple[Any, Any]) -> dict[str, str]:
    return {"k8s": str(pair[0]), "kitchen": str(pair[1])}


def terms() -> dict[str, Any]:
    """Every word the page's script draws with, in the active language."""
    terms_, status, strings = {**TERMS, **detail_words.TERMS}, {**STATUS_WORDS, **detail_words.STATUS_WORDS}, \
        {**UI_STRINGS, **detail_words.UI_STRINGS}
    return {"terms": {key: _pair(pair) for key, pair in terms_.items()},
            "status": {key: _pair(pair) for key, pair in status.items()},
            "ui": {key: str(value) for key, value in strings.items()}}
