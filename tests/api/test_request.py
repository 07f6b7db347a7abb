"""Request parsing (control/api/request.py): a resourceVersion is a revision or a 400 naming it."""

from __future__ import annotations

import pytest

from control import errors
from control.api.request import parse_revision


def test_a_revision_is_read():
    assert parse_revision("42") == 42 and parse_revision("0") == 0


@pytest.mark.parametrize("text", ["abc", "1.5", "", "12a"])
def test_anything_else_is_a_bad_request_naming_it(text):
    with pytest.raises(errors.BadRequest) as info:
        parse_revision(text)
    assert info.value.code == 400
    assert info.value.message == f'resourceVersion: Invalid value: "{text}": must be an integer'
