"""A simulated container's filesystem: directories and small files in memory, for the shell.

Guarantees:
- Paths are POSIX; every operation resolves them against a working directory and normalises
  `.`/`..` (never above `/`), so `cd ..; cat ../etc/hostname` means what it means in a container.
- A container starts with the files the kubelet writes into every container, as the kubelet writes
  them: `/etc/hostname` (the pod's name), `/etc/hosts` (Kubernetes-managed, with the pod's IP and
  name) and `/etc/resolv.conf` (the pod's namespace search path, the cluster DNS, `ndots:5`).
- Errors are values: every failing operation raises `FsError` carrying the C library's wording
  (`No such file or directory`, `Is a directory`, ...) that the shell puts after the program name.
- The filesystem lives as long as its container run does; nothing is written to disk.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from control.kinds.network import CLUSTER_DOMAIN

CLUSTER_DNS = "10.96.0.10"  # the kube-dns Service's ClusterIP, as kubeadm's default plan has it
BASE_DIRECTORIES = ("/", "/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr", "/usr/bin",
                    "/var", "/var/log", "/var/run", "/var/run/secrets")
NO_SUCH = "No such file or directory"


class FsError(Exception):
    """A failed file operation, with errno's text (strerror)."""


def hosts_file(pod_ip: str, pod_name: str) -> str:
    """`/etc/hosts` as the kubelet writes it for a pod on the pod network."""
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
             "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix",
             "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    if pod_ip:
        lines.append(f"{pod_ip}\t{pod_name}")
    return "\n".join(lines) + "\n"


def resolv_conf(namespace: str) -> str:
    """`/etc/resolv.conf` for dnsPolicy ClusterFirst: the namespace's search path first."""
    search = f"{namespace}.svc.{CLUSTER_DOMAIN} svc.{CLUSTER_DOMAIN} {CLUSTER_DOMAIN}"
    return f"search {search}\nnameserver {CLUSTER_DNS}\noptions ndots:5\n"


@dataclass
class Filesystem:
    files: dict[str, bytes] = field(default_factory=dict)
    directories: set[str] = field(default_factory=lambda: set(BASE_DIRECTORIES))

    @classmethod
    def for_container(cls, *, pod_name: str, namespace: str, pod_ip: str) -> Filesystem:
        fs = cls()
        fs.files["/etc/hostname"] = f"{pod_name}\n".encode()
        fs.files["/etc/hosts"] = hosts_file(pod_ip, pod_name).encode()
        fs.files["/etc/resolv.conf"] = resolv_conf(namespace).encode()
        return fs

    @staticmethod
    def resolve(cwd: str, path: str) -> str:
        joined = posixpath.normpath(posixpath.join(cwd, path))
        return "/" + joined.lstrip("/")  # normpath keeps a leading "//"; "/.." stays "/"

    def is_dir(self, path: str) -> bool:
        return path in self.directories

    def is_file(self, path: str) -> bool:
        return path in self.files

    def exists(self, path: str) -> bool:
        return self.is_dir(path) or self.is_file(path)

    def _parent_must_exist(self, path: str) -> None:
        parent = posixpath.dirname(path)
        if parent not in self.directories:
            raise FsError(NO_SUCH if parent not in self.files else "Not a directory")

    def read(self, path: str) -> bytes:
        if path in self.directories:
            raise FsError("Is a directory")
        if path not in self.files:
            raise FsError(NO_SUCH)
        return self.files[path]

    def write(self, path: str, data: bytes, *, append: bool = False) -> None:
        if path in self.directories:
            raise FsError("Is a directory")
        self._parent_must_exist(path)
        self.files[path] = (self.files.get(path, b"") + data) if append else data

    def touch(self, path: str) -> None:
        if not self.exists(path):
            self.write(path, b"")

    def remove(self, path: str, *, recursive: bool = False) -> None:
        if path in self.files:
            del self.files[path]
            return
        if path not in self.directories:
            raise FsError(NO_SUCH)
        if not recursive:
            raise FsError("Is a directory")
        if path == "/":
            raise FsError("Device or resource busy")
        inside = path + "/"
        self.directories = {d for d in self.directories if d != path and not d.startswith(inside)}
        self.files = {f: data for f, data in self.files.items() if not f.startswith(inside)}

    def make_dir(self, path: str, *, parents: bool = False) -> None:
        if parents:
            parts, current = [p for p in path.split("/") if p], ""
            for part in parts:
                current += "/" + part
                if current in self.files:
                    raise FsError("Not a directory")
                self.directories.add(current)
            return
        if self.exists(path):
            raise FsError("File exists")
        self._parent_must_exist(path)
        self.directories.add(path)

    def list_dir(self, path: str) -> list[str]:
        """The names directly inside a directory, sorted."""
        if path not in self.directories:
            raise FsError(NO_SUCH if path not in self.files else "Not a directory")
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):] for p in (*self.directories, *self.files)
                 if p.startswith(prefix) and p != path and "/" not in p[len(prefix):]}
        return sorted(names)
