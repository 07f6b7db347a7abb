"""control.client.resources: a Resource restates a served Kind's names (Resource.of), never drifts."""

from __future__ import annotations


def test_every_constant_restates_its_kind_and_every_built_in_kind_has_a_resource():
    from control import kinds as registry
    from control.client import resources

    for constant in resources.ALL:
        kind = registry.by_kind(constant.api_version, constant.kind)
        assert kind is not None and resources.Resource.of(kind) == constant, constant
    for kind in registry.SERVED:
        assert resources.BY_KIND[(kind.api_version, kind.kind)] == resources.Resource.of(kind)
