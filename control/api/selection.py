"""Which objects a list, watch or deletecollection is about: label and field selectors.

Guarantees: a bad selector is a BadRequest with the parser's message; a field the kind does not
index is a BadRequest "field label not supported: X", exactly as Kubernetes answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control import errors
from control.kinds.base import Kind, field_value

COMMON_FIELDS = {
    "metadata.name": lambda o: field_value(o, "metadata", "name"),
    "metadata.namespace": lambda o: field_value(o, "metadata", "namespace"),
}


@dataclass
class Selection:
    kind: Kind
    labels: Any = None
    fields: Any = None

    @classmethod
    def from_query(cls, kind: Kind, query: dict[str, str]) -> "Selection":
        from control.kinds.selectors import SelectorError, parse_field_selector, parse_label_selector

        labels = fields = None
        try:
            if query.get("labelSelector"):
                labels = parse_label_selector(query["labelSelector"])
            if query.get("fieldSelector"):
                fields = parse_field_selector(query["fieldSelector"])
        except SelectorError as exc:
            raise errors.BadRequest(f"unable to parse requirement: {exc}" if "unable to parse" not in str(exc) else str(exc)) from None
        if fields is not None:
            known = {**COMMON_FIELDS, **kind.field_getters}
            for name in sorted(fields.fields()):
                if name not in known:
                    raise errors.BadRequest(f'field label not supported: {name}')
        return cls(kind, labels, fields)

    def exact_name(self) -> str | None:
        return self.fields.exact("metadata.name") if self.fields is not None else None

    def matches(self, obj: dict[str, Any]) -> bool:
        if self.labels is not None and not self.labels.matches(obj.get("metadata", {}).get("labels") or {}):
            return False
        if self.fields is not None:
            getters = {**COMMON_FIELDS, **self.kind.field_getters}
            return self.fields.matches(lambda name: getters[name](obj))
        return True

    @property
    def everything(self) -> bool:
        return self.labels is None and self.fields is None
