"""The static pod manifests of the control plane, as `kubeadm init` writes them into
`/etc/kubernetes/manifests` (here `<data folder>/manifests`), and what the kubelet makes of each.

Guarantees:
- `write_defaults` writes the four manifests (etcd, kube-apiserver, kube-controller-manager,
  kube-scheduler) only where a file is missing: a file an operator edited is never reset.
- `read_folder` never raises: each `*.yaml`/`*.yml`/`*.json` file is one `Manifest` (a pod) or one
  `Unreadable` (not YAML, not a Pod, no name, no containers) with the message the kubelet's file
  source logs; hidden files are skipped as upstream's file source skips them.
- `judge` is the container runtime's verdict on a component's manifest: `Start` (the flags of
  the component's process), `ImagePullFailure` (an image that is not the component's own, as a
  typo'd image never pulls), `StartFailure` (a command that is not the component's binary: exec
  finds no such file) or `ExitFailure` (flags the binary refuses, `refused_flag`: it prints cobra's
  error and exits 1 at once; runcomponent refuses the same flags the same way when handed them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control import safeyaml
from control.kinds.staticpods import log_path  # noqa: F401 - the runner's and the tests' one import

VERSION = "v1.32.0"  # the Kubernetes version our components answer for (kubectl version's server)
ETCD_VERSION = "3.5.16-0"
FOLDER = "manifests"
SUFFIXES = (".yaml", ".yml", ".json")
# component -> the spoke that runs it (None: runs inside the hub process)
SPOKE_OF = {"kube-scheduler": "scheduler", "kube-controller-manager": "controller-manager",
            "kube-apiserver": None, "etcd": None}


def folder_of(data_dir: Path) -> Path:
    return Path(data_dir) / FOLDER


def _flags(component: str) -> list[str]:
    """kubeadm's flags for each component (cmd/kubeadm/app/phases/controlplane/manifests.go)."""
    if component == "kube-scheduler":
        return ["--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
                "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"]
    if component == "kube-controller-manager":
        return ["--allocate-node-cidrs=true", "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
                "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf", "--bind-address=127.0.0.1",
                "--client-ca-file=/etc/kubernetes/pki/ca.crt", "--cluster-cidr=10.244.0.0/16",
                "--cluster-name=kubernetes", "--controllers=*,bootstrapsigner,tokencleaner",
                "--kubeconfig=/etc/kubernetes/controller-manager.conf", "--leader-elect=true",
                "--service-cluster-ip-range=10.96.0.0/12", "--use-service-account-credentials=true"]
    if component == "kube-apiserver":
        return ["--advertise-address=127.0.0.1", "--allow-privileged=true", "--authorization-mode=Node,RBAC",
                "--client-ca-file=/etc/kubernetes/pki/ca.crt", "--enable-admission-plugins=NodeRestriction",
                "--etcd-servers=https://127.0.0.1:2379", "--secure-port=6443",
                "--service-cluster-ip-range=10.96.0.0/12"]
    return ["--advertise-client-urls=https://127.0.0.1:2379", "--data-dir=/var/lib/etcd",
            "--listen-client-urls=https://127.0.0.1:2379", "--name=control-plane"]


def default_manifest(component: str) -> dict[str, Any]:
    """The Pod kubeadm writes for `component` (labels component=<name>, tier=control-plane)."""
    image = (f"registry.k8s.io/etcd:{ETCD_VERSION}" if component == "etcd"
             else f"registry.k8s.io/{component}:{VERSION}")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": component, "namespace": "kube-system",
                         "labels": {"component": component, "tier": "control-plane"}},
            "spec": {"containers": [{"name": component, "image": image, "imagePullPolicy": "IfNotPresent",
                                     "command": [component, *_flags(component)],
                                     "resources": {"requests": {"cpu": "100m" if component != "kube-apiserver"
                                                                else "250m"}}}],
                     "hostNetwork": True, "priority": 2000001000, "priorityClassName": "system-node-critical",
                     "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}},
            "status": {}}


def write_defaults(data_dir: Path) -> list[Path]:
    """Write every missing default manifest; returns the files written."""
    import yaml

    folder = folder_of(data_dir)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = []
    for component in SPOKE_OF:
        path = folder / f"{component}.yaml"
        if not path.exists():
            path.write_text(yaml.safe_dump(default_manifest(component)))  # sorted, as kubeadm's files
            written.append(path)
    return written


@dataclass(frozen=True)
class Manifest:
    path: Path
    pod: dict[str, Any]
    text: str  # what was read: its hash is the mirror pod's config.hash

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    @property
    def container(self) -> dict[str, Any]:
        return self.pod["spec"]["containers"][0]

    @property
    def component(self) -> str:
        """The control-plane component this manifest runs (its `component` label, else its name)."""
        labels = self.pod["metadata"].get("labels") or {}
        return str(labels.get("component") or self.name)


@dataclass(frozen=True)
class Unreadable:
    path: Path
    message: str


def parse(path: Path, text: str) -> Manifest | Unreadable:
    """One file as the kubelet's file source decodes it (pkg/kubelet/config/common.go)."""
    try:
        documents = [d for d in safeyaml.load_documents(text) if d is not None]
    except Exception as exc:  # noqa: BLE001 - any decoding failure is the file's, reported, never raised
        return Unreadable(path, f"invalid pod: {safeyaml.problem(exc)}")
    if len(documents) != 1 or not isinstance(documents[0], dict):
        return Unreadable(path, "invalid pod: the file must hold exactly one object")
    pod = documents[0]
    if pod.get("kind") != "Pod" or pod.get("apiVersion") != "v1":
        return Unreadable(path, f"invalid pod: kind {pod.get('kind')!r} of {pod.get('apiVersion')!r}, want v1 Pod")
    meta, spec = pod.get("metadata"), pod.get("spec")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return Unreadable(path, "invalid pod: metadata.name: Required value: name or generateName is required")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not containers or not all(isinstance(c, dict) for c in containers):
        return Unreadable(path, "invalid pod: spec.containers: Required value")
    return Manifest(path, pod, text)


def read_folder(folder: Path) -> list[Manifest | Unreadable]:
    """Every manifest file of `folder`, sorted by name (an absent folder holds none)."""
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.name.startswith("."))
    except OSError:
        return []
    found: list[Manifest | Unreadable] = []
    for path in paths:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            found.append(Unreadable(path, f"unable to read config path {str(path)!r}: {exc}"))
            continue
        found.append(parse(path, text))
    return found


@dataclass(frozen=True)
class Start:
    flags: tuple[str, ...]


@dataclass(frozen=True)
class ImagePullFailure:
    image: str
    message: str


@dataclass(frozen=True)
class StartFailure:
    message: str


@dataclass(frozen=True)
class ExitFailure:
    """The binary starts and exits at once, printing `output` (a flag it refuses)."""

    code: int
    output: str


Verdict = Start | ImagePullFailure | StartFailure | ExitFailure
_TAG = re.compile(r"^v?\d+\.\d+\.\d+(-\d+)?$")


def judge(manifest: Manifest) -> Verdict:
    """What starting this manifest's first container comes to."""
    component, container = manifest.component, manifest.container
    image = str(container.get("image") or "")
    repository, _, tag = image.rpartition(":")
    if repository != f"registry.k8s.io/{component}" or not _TAG.match(tag):
        return ImagePullFailure(image, f'rpc error: code = NotFound desc = failed to pull and unpack image '
                                       f'"{image}": failed to resolve reference "{image}": {image}: not found')
    command = [str(word) for word in (container.get("command") or [])] + [str(w) for w in container.get("args") or []]
    if not command or command[0] != component:
        binary = command[0] if command else "<image entrypoint>"
        return StartFailure(f'failed to create containerd task: failed to create shim task: OCI runtime create '
                            f'failed: runc create failed: unable to start container process: exec: "{binary}": '
                            f'executable file not found in $PATH: unknown')
    refusal = refused_flag(SPOKE_OF.get(component) or component, command[1:])
    if refusal:
        return ExitFailure(1, f"Error: {refusal}")
    return Start(tuple(command[1:]))


# The kubeconfig files kubeadm writes into /etc/kubernetes: a flag naming another file fails to stat it.
KUBECONFIGS = frozenset(f"/etc/kubernetes/{name}.conf" for name in
                        ("admin", "super-admin", "kubelet", "controller-manager", "scheduler"))
_SPOKE_COMPONENT = {spoke: component for component, spoke in SPOKE_OF.items() if spoke}
_COMMON_FLAGS = frozenset({"v", "logging-format", "profiling", "secure-port", "feature-gates", "master",
                           "config", "requestheader-client-ca-file", "tls-cert-file", "tls-private-key-file",
                           "root-ca-file", "service-account-private-key-file", "cluster-signing-cert-file",
                           "cluster-signing-key-file", "requestheader-allowed-names", "node-cidr-mask-size"})


def refused_flag(spoke: str, flags: list[str]) -> str:
    """The message with which the component's binary refuses `flags` ("" when it takes them all):
    a flag it does not know (cobra's "unknown flag"), or a kubeconfig that does not exist."""
    component = _SPOKE_COMPONENT.get(spoke, spoke)
    known = {flag[2:].split("=", 1)[0] for flag in _flags(component)} | _COMMON_FLAGS
    for flag in flags:
        name, has_value, value = flag.removeprefix("--").partition("=")
        if not flag.startswith("--") or name not in known:
            return f"unknown flag: {flag.split('=', 1)[0]}" if flag.startswith("-") else f'unknown command "{flag}" for "{component}"'
        if name.endswith("kubeconfig") and has_value and value not in KUBECONFIGS:
            return f"stat {value}: no such file or directory"
    return ""
