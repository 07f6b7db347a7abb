"""How the simulated registry decides whether an image exists: a rule, not only a list.

A workshop pastes manifests from kubernetes.io, from courses and from other people's repositories;
each names images by their published references (`paulczar/gb-frontend:v5`,
`registry.k8s.io/redis@sha256:…`, `nginx:1.21.4`, `bash:5`). A list of every image of every
registry cannot be kept, yet a typo (`ngnix:latestt`) must still end in ErrImagePull, because the
ImagePullBackOff lesson is built on it. `resolve(catalogue, ref)` answers the image a well-formed
reference names (already parsed by `images.parse_reference`, the distribution reference grammar),
or None when the registry would answer "not found":

1. A repository the catalogue describes (`data/images.yaml`, the ConfigMap) has the tags it lists,
   any digest, and every version of a listed series: `nginx:1.21.4` because `1.21` is listed,
   within the listed versions' range (not below the oldest, no minor series past the newest, no
   more dotted parts than its listed versions have), with a suffix its tags use (`-alpine`).
2. Docker Hub's `library/` namespace holds only Docker's official images: an official name the
   catalogue does not describe (`bash`, `elasticsearch`) has every tag of the official shape
   (`latest`, versions, the variant words `alpine`, `slim`, `bookworm`, … joined by `-`); any
   other name there (`ngnix`) does not exist.
3. Any other repository on a public registry (Docker Hub and the data file's `registries`: a
   user's `paulczar/gb-frontend`, `gcr.io/google-samples/hello-go-gke`; a registry that only
   catalogue entries name, such as registry.kitchen.local, holds only those) exists with any tag
   or digest, unless it is clearly a
   typo: its name is a near miss of a known image's name (`bitnami/ngnix`, `busybx`) or it differs
   from a listed repository in one path segment by a near miss (`gcr.io/google-smaples/hello-app`),
   or a part of its tag is a near miss of a common channel word (`:latestt`, `:alpnie`).
A near miss is a small optimal-string-alignment distance (a swap of two neighbours counts one;
see `near_miss` for the lengths), never 0: a known name spelled exactly is no typo, and names
equal once `-`, `_` and `.` are ignored (`google_samples`) are the same name.
An unknown registry host is the caller's `no such host`, not decided here.
"""

from __future__ import annotations

import re
from control.kubelet.images import DOCKER_HUB, Catalogue, ImageFacts, Reference

_VERSION = re.compile(r"^(v?)(\d+(?:\.\d+)*)((?:-.+)?)$")
_WORD = re.compile(r"^([a-z]+)[0-9.]*$")  # alpine3.20, jdk21, php8.3, ubi9
_SEPARATORS = re.compile(r"[-_.]")
# The words official images' tags are made of (besides versions), e.g. `3.12-slim-bookworm`,
# `lts-alpine3.20`, `8.0-apache`: distributions, their releases, flavours and channels.
VARIANT_WORDS = frozenset("""
latest stable mainline lts current edge devel rolling nightly rc beta alpha preview canary release
alpine slim bookworm bullseye buster stretch trixie jammy noble focal bionic xenial trusty oracular
ubi ubuntu debian centos rockylinux almalinux windowsservercore nanoserver ltsc musl glibc uclibc
jdk jre temurin corretto openjdk graalvm perl otel apache fpm cli zts management git curl
""".split())
# The channel words a tag of any repository is checked against for slips: few, so that a user's
# own tag (`local`, `meta`) is never taken for a slip of a rarer word (`focal`, `beta`).
TYPO_WORDS = frozenset({"latest", "stable", "alpine", "mainline", "bookworm", "bullseye", "nightly"})


def osa_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def near_miss(word: str, known: str) -> bool:
    """`word` is a slip of `known`: close, not equal, not the same name with other separators.
    Short words are judged strictly, as real names crowd there (`init` is no typo of `unit`):
    three letters or fewer never, four only by a swap of two neighbours (`bahs`), five to seven
    by one edit, eight or more by two."""
    if _SEPARATORS.sub("", word) == _SEPARATORS.sub("", known):
        return False
    shorter = min(len(word), len(known))
    if shorter <= 3:
        return False
    if shorter == 4:
        return len(word) == len(known) and sorted(word) == sorted(known) and osa_distance(word, known) == 1
    return osa_distance(word, known) <= (1 if shorter <= 7 else 2)


def split_version(tag: str) -> tuple[str, tuple[int, ...], str] | None:
    """`v1.21.4-alpine` -> ("v", (1, 21, 4), "-alpine"); None for a tag that is no version."""
    found = _VERSION.match(tag)
    if not found:
        return None
    return found.group(1), tuple(int(p) for p in found.group(2).split(".")), found.group(3)


def _piece_is_word(piece: str) -> bool:
    found = _WORD.match(piece)
    return bool(found) and found.group(1) in VARIANT_WORDS


def official_shape(tag: str) -> bool:
    """A tag as official images publish them: versions and variant words joined by `-`."""
    return all(split_version(piece) is not None or _piece_is_word(piece) for piece in tag.split("-"))


def mistyped_tag(tag: str) -> bool:
    """A part of the tag is a near miss of a common channel word (`latestt`, `alpnie`)."""
    words = [found.group(1) if (found := _WORD.match(p)) else p for p in tag.split("-")]
    return any(w not in VARIANT_WORDS and any(near_miss(w, v) for v in TYPO_WORDS) for w in words)


def listed_tag(facts: ImageFacts, tag: str) -> bool:
    """Rule 1: a tag the repository lists, or a version within one of its listed series."""
    if tag in facts.tags:
        return True
    wanted = split_version(tag)
    if wanted is None:
        return False
    prefix, numbers, suffix = wanted
    listed = [v for v in map(split_version, facts.tags) if v is not None and v[0] == prefix]
    if not listed or (suffix and suffix not in {v[2] for v in listed}):
        return False
    versions = [v[1] for v in listed]
    newest = max(versions)
    cut = min(2, len(newest))  # the newest series: `1.29` reaches 1.29.x, a bare `2` every 2.x
    return (len(numbers) <= max(len(v) for v in versions) and numbers >= min(versions)
            and numbers[:cut] <= newest[:cut])


def _known_names(catalogue: Catalogue) -> set[str]:
    return {repo.rsplit("/", 1)[-1] for repo in catalogue.images} | set(catalogue.official)


def mistyped_repository(catalogue: Catalogue, ref: Reference) -> bool:
    """Rule 3's typos: the name slips from a known name, or one segment from a listed repository."""
    name = ref.path.rsplit("/", 1)[-1]
    known = _known_names(catalogue)
    if name not in known and any(near_miss(name, other) for other in known):
        return True
    parts = ref.path.split("/")
    for repository in catalogue.images:
        domain, _, path = repository.partition("/")
        other = path.split("/")
        if domain != ref.domain or len(other) != len(parts):
            continue
        differing = [(mine, theirs) for mine, theirs in zip(parts, other) if mine != theirs]
        if len(differing) == 1 and near_miss(*differing[0]):
            return True
    return False


def resolve(catalogue: Catalogue, ref: Reference) -> ImageFacts | None:
    """The image `ref` names on a registry the catalogue knows, or None for "not found"."""
    by_digest = bool(ref.digest) and not ref.tag
    listed = catalogue.images.get(ref.repository)
    if listed is not None:
        return listed if by_digest or listed_tag(listed, ref.tag) else None
    generic = ImageFacts(repository=ref.repository, tags=frozenset({ref.tag} if ref.tag else ()))
    if ref.domain == DOCKER_HUB and ref.path.startswith("library/"):
        official = ref.path.removeprefix("library/") in catalogue.official
        return generic if official and (by_digest or official_shape(ref.tag)) else None
    if not catalogue.public_registry(ref.domain):
        return None  # a registry only catalogue entries name (registry.kitchen.local) holds only those
    if mistyped_repository(catalogue, ref) or (not by_digest and mistyped_tag(ref.tag)):
        return None
    return generic
