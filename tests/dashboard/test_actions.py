"""The dashboard's form numbers (dashboard.actions.form_int): one reading, one wording for every
button that takes a count or a delta."""

from __future__ import annotations

import pytest

from dashboard.actions import ActionError, form_int


def test_a_whole_number_is_read_and_a_default_fills_an_empty_field():
    assert form_int({"delta": "-2"}, "delta") == -2
    assert form_int({}, "count", default="10", low=1, high=50) == 10
    assert form_int({"count": ""}, "count", default="10") == 10


@pytest.mark.parametrize("form, message", [
    ({"delta": "two"}, "delta must be an integer"),
    ({}, "delta must be an integer"),
    ({"delta": "1.5"}, "delta must be an integer"),
])
def test_not_a_number(form, message):
    with pytest.raises(ActionError, match=message):
        form_int(form, "delta")


@pytest.mark.parametrize("value", ["0", "51"])
def test_out_of_range(value):
    with pytest.raises(ActionError, match="count must be between 1 and 50"):
        form_int({"count": value}, "count", low=1, high=50)
