"""YAML read within a budget, into plain JSON values: the one YAML reader of the hub and the dashboard.

Guarantees:
- A stream is first walked as parser events (libyaml, C speed) that build nothing: its depth, its
  node count with aliases expanded, and its aliasing are checked before a single Python object is
  made, so a billion-laughs body or a thousand nested brackets costs a scan and a refusal, never
  the memory or the recursion of building it. The limits mirror go-yaml's (sigs.k8s.io/yaml, the
  decoder kube-apiserver uses): "document contains excessive aliasing" by its alias ratio rule,
  "anchor 'x' value contains itself" for an alias inside its own anchor, and a maximum depth.
- What it yields is plain JSON: no timestamps (they stay strings), string keys, no NaN, Infinity
  or bytes.
- `read_stream` never raises and returns only plain values: it is what a worker process runs
  (`control.offloop`). This module imports neither Django nor any other part of the project.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

_BASE_LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader  # type: ignore[attr-defined]
# go-yaml (decode.go): below this many decodes up to 99% may come from aliases, above the high mark 10%.
ALIAS_RATIO_RANGE_LOW, ALIAS_RATIO_RANGE_HIGH = 400_000, 4_000_000


@dataclass(frozen=True)
class Budget:
    """What one stream may cost. go-yaml allows a depth of 10000; Python builds and later walks
    objects recursively, so the hub stops at `max_depth` (far deeper than any real manifest)."""

    max_depth: int = 100
    max_nodes: int = 1_000_000  # scalars and collections, aliases expanded
    min_aliases_checked: int = 100  # go-yaml looks at the alias ratio only past 100 aliased decodes ...
    min_nodes_checked: int = 1000  # ... and 1000 decodes in all


class BudgetExceeded(ValueError):
    """Over the budget: `too_large` (the node count: a 413) or not (depth, aliasing: a 400)."""

    def __init__(self, message: str, *, too_large: bool = False):
        super().__init__(message)
        self.too_large = too_large


@dataclass(frozen=True)
class Outcome:
    verdict: str  # ok | undecodable | too_large
    value: Any = None  # the documents (ok), else go-yaml's words for the problem


class _PlainLoader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader without implicit timestamps (a date stays the string it was)."""


_PlainLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's allowedAliasRatio: the share of decodes that may come from alias expansion."""
    if decodes <= ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * ((decodes - ALIAS_RATIO_RANGE_LOW) / span)


class _Tally:
    """Running counts of one stream's walk: nodes as they would be built, and how many of them
    alias expansion adds."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.nodes = 0
        self.aliased = 0
        self.anchors: dict[str, int] = {}  # anchor -> nodes its value expands to (closed anchors only)
        self.open: list[tuple[str | None, int]] = []  # collections being read: (anchor, nodes before it)

    def add(self, count: int, *, aliased: bool = False) -> None:
        self.nodes += count
        if aliased:
            self.aliased += count
        budget = self.budget
        if self.nodes > budget.max_nodes:
            raise BudgetExceeded(f"the YAML holds more than {budget.max_nodes} nodes (aliases expanded)",
                                 too_large=True)
        if (self.aliased > budget.min_aliases_checked and self.nodes > budget.min_nodes_checked
                and self.aliased / self.nodes > allowed_alias_ratio(self.nodes)):
            raise BudgetExceeded("document contains excessive aliasing")

    def event(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.anchors.clear()  # anchors do not cross documents
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in self.anchors:
                if any(anchor == event.anchor for anchor, _ in self.open):
                    raise BudgetExceeded(f"anchor '{event.anchor}' value contains itself")
                return  # an unknown anchor: the loader reports it, with its line
            self.add(self.anchors[event.anchor], aliased=True)
        elif isinstance(event, yaml.ScalarEvent):
            self.add(1)
            if event.anchor is not None:
                self.anchors[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(self.open) >= self.budget.max_depth:
                raise BudgetExceeded(f"exceeded max depth of {self.budget.max_depth}")
            self.add(1)
            self.open.append((event.anchor, self.nodes - 1))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, before = self.open.pop()
            if anchor is not None:
                self.anchors[anchor] = self.nodes - before


def _plain_json(value: Any) -> Any:
    """Make YAML output JSON-safe: keys as strings, no NaN/Infinity, no bytes."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, bool) else str(k).lower(): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("NaN and Infinity are not valid JSON numbers")
    if isinstance(value, bytes):
        raise ValueError("binary values are not supported")
    return value


def problem(exc: BaseException) -> str:
    """go-yaml's wording: `yaml: line N: <problem>` (it is a port of libyaml, as PyYAML is)."""
    what = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if what and mark is not None:
        return f"yaml: line {mark.line + 1}: {what}"
    if isinstance(exc, ValueError) and str(exc):
        return f"yaml: {exc}"
    return f"yaml: {what or 'invalid document'}"


def load_documents(text: str | bytes, budget: Budget = Budget()) -> list[Any]:
    """All documents of a stream (empty ones dropped), as plain JSON values. Raises BudgetExceeded
    over the budget, yaml.YAMLError or ValueError when it cannot be read."""
    tally = _Tally(budget)
    for event in yaml.parse(text, Loader=_PlainLoader):
        tally.event(event)
    return [_plain_json(doc) for doc in yaml.load_all(text, Loader=_PlainLoader) if doc is not None]


def read_stream(text: str | bytes, budget: Budget = Budget()) -> Outcome:
    """`load_documents` as an Outcome, with go-yaml's words for what went wrong."""
    try:
        return Outcome("ok", load_documents(text, budget))
    except BudgetExceeded as exc:
        return Outcome("too_large" if exc.too_large else "undecodable", str(exc) if exc.too_large else f"yaml: {exc}")
    except (ValueError, yaml.YAMLError, RecursionError) as exc:
        return Outcome("undecodable", problem(exc))
