"""A simulated container's filesystem: directories and small files in memory, for the shell.

Guarantees:
- Paths are POSIX; every operation resolves them against a working directory and normalises
  `.`/`..` (never above `/`), so `cd ..; cat ../etc/hostname` means what it means in a container.
- A container starts with the files the kubelet writes into every container, as the kubelet writes
  them: `/etc/hostname` (the pod's hostname: `spec.hostname` or its name), `/etc/hosts`
  (Kubernetes-managed, with the pod's IP, hostname and `subdomain` FQDN, then its hostAliases)
  and `/etc/resolv.conf` (the pod's namespace search path, the cluster DNS, `ndots:5`).
- Errors are values: every failing operation raises `FsError` carrying the C library's wording
  (`No such file or directory`, `Is a directory`, ...) that the shell puts after the program name.
- Volumes are mounted on directories (`mount`): a path under a mount point is read from and
  written to the volume's tree (`storage`), so an emptyDir seen by two containers is one tree and a
  claim's files are on the kubelet's disk; a read-only mount (and a projected ConfigMap, Secret or
  downward API volume, always read-only) refuses writes with `Read-only file system`.
- The container's own files (everything not under a mount) live as long as its run does.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Union

from control.kinds.network import CLUSTER_DNS, CLUSTER_DOMAIN
from control.kubelet.storage import DiskTree, FsError, MemoryTree, normal

__all__ = ["Filesystem", "FsError", "Mount", "hosts_file", "pod_hostname", "resolv_conf"]
Tree = Union[MemoryTree, DiskTree]

BASE_DIRECTORIES = ("/", "/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/share",
                    "/var", "/var/log", "/var/run", "/var/run/secrets")
READ_ONLY = "Read-only file system"


def pod_hostname(pod: dict) -> tuple[str, str]:
    """(hostname, domain) as the kubelet gives a pod (GeneratePodHostNameAndDomain): `spec.hostname`
    or the pod's name (at most 63 characters); with `spec.subdomain`, the domain
    `<subdomain>.<namespace>.svc.<cluster domain>`."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    hostname = str(spec.get("hostname") or meta.get("name") or "")[:63].rstrip("-.")
    subdomain = spec.get("subdomain")
    domain = f"{subdomain}.{meta.get('namespace')}.svc.{CLUSTER_DOMAIN}" if subdomain else ""
    return hostname, domain


def hosts_file(pod_ip: str, pod_name: str, domain: str = "", aliases: list | None = None) -> str:
    """`/etc/hosts` as the kubelet writes it for a pod on the pod network (managedHostsFileContent)."""
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
             "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix",
             "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    if pod_ip:
        lines.append(f"{pod_ip}\t{pod_name}.{domain}\t{pod_name}" if domain else f"{pod_ip}\t{pod_name}")
    entries = [a for a in aliases or [] if isinstance(a, dict) and a.get("ip")]
    if entries:
        lines += ["", "# Entries added by HostAliases."]
        lines += [f"{a['ip']}\t" + "\t".join(str(h) for h in a.get("hostnames") or []) for a in entries]
    return "\n".join(lines) + "\n"


def resolv_conf(namespace: str) -> str:
    """`/etc/resolv.conf` for dnsPolicy ClusterFirst: the namespace's search path first."""
    search = f"{namespace}.svc.{CLUSTER_DOMAIN} svc.{CLUSTER_DOMAIN} {CLUSTER_DOMAIN}"
    return f"search {search}\nnameserver {CLUSTER_DNS}\noptions ndots:5\n"


@dataclass
class Mount:
    """A volume (or a directory inside it: subPath) seen at a mount point."""

    tree: Tree
    root: str = "/"
    read_only: bool = False


@dataclass
class Filesystem:
    layer: MemoryTree = field(default_factory=lambda: MemoryTree(directories=set(BASE_DIRECTORIES)))
    mounts: dict[str, Mount] = field(default_factory=dict)
    read_only_files: set[str] = field(default_factory=set)  # single files mounted read-only (subPath)

    @classmethod
    def for_container(cls, *, pod_name: str, namespace: str, pod_ip: str, domain: str = "",
                      aliases: list | None = None) -> Filesystem:
        fs = cls()
        fs.layer.files["/etc/hostname"] = f"{pod_name}\n".encode()
        fs.layer.files["/etc/hosts"] = hosts_file(pod_ip, pod_name, domain, aliases).encode()
        fs.layer.files["/etc/resolv.conf"] = resolv_conf(namespace).encode()
        return fs

    @staticmethod
    def resolve(cwd: str, path: str) -> str:
        joined = posixpath.normpath(posixpath.join(cwd, path))
        return "/" + joined.lstrip("/")  # normpath keeps a leading "//"; "/.." stays "/"

    # --- mounts --------------------------------------------------------------------------------

    def mount(self, path: str, mount: Mount) -> None:
        """Mount a volume's tree at the directory `path` (made when missing)."""
        path = normal(path)
        self.layer.files.pop(path, None)
        self.layer.make_dir(path, parents=True)
        self.mounts[path] = mount

    def mount_file(self, path: str, data: bytes, mode: int, *, read_only: bool = True) -> None:
        """A single file copied in at start (a subPath of a ConfigMap/Secret: it never changes)."""
        path = normal(path)
        self.layer.make_dir(posixpath.dirname(path), parents=True)
        self.layer.files[path], self.layer.modes[path] = data, mode
        if read_only:
            self.read_only_files.add(path)

    def _locate(self, path: str) -> tuple[Tree, str, Mount | None]:
        best = ""
        for point in self.mounts:
            if (path == point or path.startswith(point + "/")) and len(point) > len(best):
                best = point
        if not best:
            return self.layer, path, None
        found = self.mounts[best]
        return found.tree, normal(found.root + "/" + path[len(best):]), found

    def _writable(self, path: str) -> tuple[Tree, str]:
        tree, inside, found = self._locate(path)
        if (found is not None and found.read_only) or path in self.read_only_files:
            raise FsError(READ_ONLY)
        return tree, inside

    # --- the file operations the shell uses ----------------------------------------------------

    def is_dir(self, path: str) -> bool:
        tree, inside, _ = self._locate(path)
        return tree.kind(inside) == "dir"

    def is_file(self, path: str) -> bool:
        tree, inside, _ = self._locate(path)
        return tree.kind(inside) == "file"

    def exists(self, path: str) -> bool:
        tree, inside, _ = self._locate(path)
        return tree.kind(inside) is not None

    def mode(self, path: str) -> int:
        tree, inside, _ = self._locate(path)
        return tree.mode(inside)

    def size(self, path: str) -> int:
        tree, inside, _ = self._locate(path)
        return tree.size(inside)

    def read(self, path: str) -> bytes:
        tree, inside, _ = self._locate(path)
        return tree.read(inside)

    def write(self, path: str, data: bytes, *, append: bool = False) -> None:
        tree, inside = self._writable(path)
        tree.write(inside, data, append=append)

    def touch(self, path: str) -> None:
        if not self.exists(path):
            self.write(path, b"")

    def remove(self, path: str, *, recursive: bool = False) -> None:
        if path in self.mounts:
            raise FsError("Resource busy")
        tree, inside = self._writable(path)
        tree.remove(inside, recursive=recursive)

    def make_dir(self, path: str, *, parents: bool = False) -> None:
        if parents and self.is_dir(path):
            return
        tree, inside = self._writable(path)
        tree.make_dir(inside, parents=parents)

    def chmod(self, path: str, mode: int) -> None:
        """Set a file's or directory's permission bits (`tar` restoring what it unpacked)."""
        tree, inside = self._writable(path)
        tree.chmod(inside, mode)

    def list_dir(self, path: str) -> list[str]:
        """The names directly inside a directory, sorted."""
        tree, inside, _ = self._locate(path)
        return tree.list_dir(inside)
