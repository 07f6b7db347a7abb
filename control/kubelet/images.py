"""The simulated registry: image references as containerd reads them, and the catalogue of images
that exist (`data/images.yaml`, plus the ConfigMap kube-system/kubekitchen-images).

Guarantees:
- `parse_reference` normalises a reference exactly as the docker reference library does (`nginx`
  is `docker.io/library/nginx:latest`, `bitnami/redis:7` is `docker.io/bitnami/redis:7`, a first
  segment with a `.` or `:` or `localhost` is a registry) and raises `InvalidImage` with upstream's
  message for a reference it cannot parse (uppercase, a bad tag or digest).
- `Catalogue.find(ref)` answers the listed image with that exact tag (a digest: any listed
  repository); whether a pull succeeds is `registry.resolve`'s rule, which also uses the data
  file's Docker official image names and public registry hosts. The data file is read once per
  process (the kubelet reads it at start, before its first pod); a catalogue built with extra entries (from the ConfigMap) never changes the built-in one.
- `image_facts(image)` (built-in catalogue only: a pure function of the name) tells what the
  kubelet's conventions need: whether the image runs until stopped (`server`), is a shell, and its
  default command and ports; an image it does not know is None (the conventions then keep their
  old rules).
"""

from __future__ import annotations

import datetime
import fnmatch
import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from control.kinds.pod_defaults import image_tag

DATA_FILE = Path(__file__).resolve().parent / "data" / "images.yaml"
CONFIGMAP_NAMESPACE, CONFIGMAP_NAME = "kube-system", "kubekitchen-images"
DOCKER_HUB = "docker.io"
_HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io")
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")


class InvalidImage(ValueError):
    """A reference the runtime cannot parse: the container waits with InvalidImageName."""


@dataclass(frozen=True)
class Reference:
    domain: str  # docker.io, registry.k8s.io, localhost:5000
    path: str  # library/nginx, e2e-test-images/agnhost
    tag: str = ""  # "" only with a digest
    digest: str = ""

    @property
    def repository(self) -> str:
        return f"{self.domain}/{self.path}"

    def __str__(self) -> str:
        return self.repository + (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")


def parse_reference(image: str) -> Reference:
    """`nginx` -> docker.io/library/nginx:latest (containerd's normalised name)."""
    text = (image or "").strip()
    prefix = f'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": '
    if not text:
        raise InvalidImage(prefix + "invalid reference format")
    name, _, digest = text.partition("@")
    if digest and not _DIGEST.match(digest):
        raise InvalidImage(prefix + "invalid reference format")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        domain, remainder = first, rest
    else:
        domain, remainder = DOCKER_HUB, name
    if domain in _HUB_ALIASES:
        domain = DOCKER_HUB
    last = remainder.rsplit("/", 1)[-1]
    tag = ""
    if ":" in last:
        remainder, tag = remainder.rsplit(":", 1)
        if not _TAG.match(tag):
            raise InvalidImage(prefix + "invalid reference format")
    if remainder.lower() != remainder:
        raise InvalidImage(prefix + "invalid reference format: repository name must be lowercase")
    if not remainder or not all(_COMPONENT.match(part) for part in remainder.split("/")):
        raise InvalidImage(prefix + "invalid reference format")
    if domain == DOCKER_HUB and "/" not in remainder:
        remainder = f"library/{remainder}"
    return Reference(domain, remainder, tag or ("" if digest else "latest"), digest)


def default_pull_policy(image: str) -> str:
    """The API server's default: Always for `:latest` or no tag, IfNotPresent otherwise."""
    return "Always" if image_tag(image) == "latest" else "IfNotPresent"


@dataclass(frozen=True)
class ImageFacts:
    repository: str
    tags: frozenset[str]
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    server: bool = True
    shell: bool = False
    private: bool = False
    size: int = 10_000_000
    log: tuple[str, ...] = ()  # what its default command prints when it starts (strftime codes: the start, UTC)

    @property
    def domain(self) -> str:
        return self.repository.split("/", 1)[0]

    @property
    def command(self) -> tuple[str, ...]:
        """What the image runs when the pod gives no command or args."""
        return self.entrypoint + self.cmd


def image_log(container: dict[str, Any], started_at: float) -> list[tuple[float, str]]:
    """What a container running its image's own command prints when it starts (`ImageFacts.log`,
    its strftime codes filled with the start in UTC), each line at the start."""
    facts = image_facts(str(container.get("image") or ""))
    moment = datetime.datetime.fromtimestamp(started_at, datetime.timezone.utc)
    return [(started_at, moment.strftime(line)) for line in (facts.log if facts else ())]


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def facts_from(entry: Any) -> ImageFacts:
    """One catalogue entry (a mapping) as ImageFacts; ValueError when it cannot be one."""
    if not isinstance(entry, dict):
        raise ValueError("an image entry must be a mapping")
    name = entry.get("repository") or entry.get("image")
    if not isinstance(name, str) or not name:
        raise ValueError("an image entry needs `image` (or `repository`)")
    ref = parse_reference(name)
    tags = set(_strings(entry.get("tags"))) or ({ref.tag} if ref.tag else {"latest"})
    variants = _strings(entry.get("variants"))
    tags |= {tag + variant for tag in list(tags) for variant in variants}
    ports = tuple(int(p) for p in entry.get("ports") or [] if str(p).isdigit())
    return ImageFacts(repository=ref.repository, tags=frozenset(tags), entrypoint=_strings(entry.get("entrypoint")),
                      cmd=_strings(entry.get("cmd")), ports=ports, server=bool(entry.get("server", True)),
                      shell=bool(entry.get("shell", False)), private=bool(entry.get("private", False)),
                      size=int(entry.get("size") or 10_000_000), log=_strings(entry.get("log")))


@dataclass(frozen=True)
class Catalogue:
    images: dict[str, ImageFacts] = field(default_factory=dict)  # by repository
    official: frozenset[str] = frozenset()  # Docker Hub's official image names (library/<name>)
    registries: tuple[str, ...] = ()  # public registry hosts, `*` patterns allowed (`*.gcr.io`)

    def find(self, ref: Reference) -> ImageFacts | None:
        """The listed image with this exact tag (or any digest); `registry.resolve` decides pulls."""
        found = self.images.get(ref.repository)
        if found is None:
            return None
        if ref.digest and not ref.tag:
            return found
        return found if ref.tag in found.tags else None

    def public_registry(self, domain: str) -> bool:
        """Docker Hub or a host the data file's `registries` names (anyone may push there)."""
        return domain == DOCKER_HUB or any(fnmatch.fnmatchcase(domain, host) for host in self.registries)

    def knows_registry(self, domain: str) -> bool:
        return self.public_registry(domain) or any(f.domain == domain for f in self.images.values())

    def with_entries(self, entries: list[ImageFacts]) -> "Catalogue":
        """A catalogue with more images: a repository already known gains the new tags."""
        merged = dict(self.images)
        for facts in entries:
            old = merged.get(facts.repository)
            merged[facts.repository] = facts if old is None else replace(facts, tags=old.tags | facts.tags)
        return replace(self, images=merged)


# libyaml's safe loader when PyYAML was built with it: the same documents, about 5x less CPU (the
# pure-Python one took 0.09 s per kubelet, on its first pod's admission).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=1)
def builtin() -> Catalogue:
    data = yaml.load(DATA_FILE.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}
    return Catalogue({f.repository: f for f in map(facts_from, data.get("images") or [])},
                     official=frozenset(_strings(data.get("official"))),
                     registries=_strings(data.get("registries")))


def configmap_entries(configmap: dict[str, Any] | None) -> tuple[list[ImageFacts], list[str]]:
    """The images a kubekitchen-images ConfigMap adds, and a message per data key it cannot read."""
    entries, problems = [], []
    for key, text in sorted(((configmap or {}).get("data") or {}).items()):
        try:
            entries.append(facts_from(yaml.safe_load(text)))
        except (ValueError, TypeError, yaml.YAMLError) as exc:
            problems.append(f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME} key {key}: {exc}")
    return entries, problems


def image_facts(image: str) -> ImageFacts | None:
    """What the built-in catalogue says of an image's repository (any tag), or None."""
    try:
        ref = parse_reference(image)
    except InvalidImage:
        return None
    return builtin().images.get(ref.repository)


def container_ports(container: dict[str, Any]) -> tuple[int, ...]:
    """The ports a container's server listens on: the spec's, else its image's (EXPOSE)."""
    declared = tuple(p.get("containerPort") for p in container.get("ports") or []
                     if isinstance(p, dict) and isinstance(p.get("containerPort"), int))
    if declared:
        return declared
    facts = image_facts(str(container.get("image") or ""))
    return facts.ports if facts else ()
