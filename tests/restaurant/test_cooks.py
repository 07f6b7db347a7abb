"""The cooks as spokes: each known by its name, an unknown one refused before anything connects."""

import asyncio

import pytest

from control.restaurant.cooks import COOKS, run_cook


def test_a_cook_is_named_or_refused():
    assert set(COOKS) == {"line-cook", "garnish-cook"}
    with pytest.raises(ValueError, match='unknown cook "dishwasher"'):
        asyncio.run(run_cook("http://127.0.0.1:9", "dishwasher"))
