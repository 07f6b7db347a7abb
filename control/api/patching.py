"""The three classic patch types applied to a stored object: JSON patch (RFC 6902, via the
jsonpatch library), JSON merge patch (RFC 7386) and strategic merge patch.

Guarantees: the stored object is never changed in place; a malformed patch document is a
BadRequest, a patch that cannot be applied to this object is Invalid (422); nothing else escapes.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Any

import jsonpatch

from control import errors
from control.kinds.base import Kind


@lru_cache(maxsize=None)
def patch_meta(definition: str):
    from control.api.smp import PatchMeta
    from control.kinds.schemas import DEFINITIONS

    if definition not in DEFINITIONS:
        return PatchMeta.empty()
    return PatchMeta.from_openapi(DEFINITIONS, definition)


def _without_python_reprs(text: str) -> str:
    """jsonpatch's messages end with the Python repr of the document or a value's class; the
    client must see neither (it would read `{'a': 1}` or `<class 'int'>`)."""
    text = re.sub(r" \(<class '[^']+'>\)", "", text)
    text = re.sub(r" not found in [\[{].*$", " not found", text, flags=re.S)
    return re.sub(r"(?<![A-Za-z])'([^']*)'", r'"\1"', text)


def apply_patch(kind: Kind, current: dict[str, Any], patch_type: str, patch: Any, *, definition: str | None = None) -> dict[str, Any]:
    from control.api.smp import PatchError, json_merge_patch, strategic_merge_patch

    if patch_type == "json":
        if not isinstance(patch, list):
            raise errors.BadRequest("json patch must be a list of operations")
        try:
            result = jsonpatch.JsonPatch(patch).apply(copy.deepcopy(current))
        except jsonpatch.JsonPatchTestFailed:
            raise errors.Invalid("the server rejected our request due to an error in our request: "
                                 "test failed") from None  # the library's text holds Python reprs
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise errors.Invalid(f"the server rejected our request due to an error in our request: "
                                 f"{_without_python_reprs(str(exc))}") from None
        except RecursionError:
            raise errors.BadRequest("the patch is nested too deeply") from None
        except (TypeError, KeyError, ValueError, AttributeError, IndexError) as exc:
            raise errors.BadRequest(f"invalid json patch: {exc}") from None
    elif patch_type == "merge":
        if not isinstance(patch, dict):
            raise errors.BadRequest("merge patch must be a JSON object")
        result = json_merge_patch(current, patch)
    elif patch_type == "strategic":
        if not isinstance(patch, dict):
            raise errors.BadRequest("strategic merge patch must be a JSON object")
        try:
            result = strategic_merge_patch(current, patch, patch_meta(definition or kind.definition))
        except PatchError as exc:
            raise errors.Invalid(f"the server rejected our request due to an error in our request: {exc}") from None
        except RecursionError:
            raise errors.BadRequest("the patch is nested too deeply") from None
    else:
        raise errors.UnsupportedMediaType(f"patch type {patch_type} is not supported")
    if not isinstance(result, dict):
        raise errors.Invalid("the patched object must be a JSON object")
    return result
