"""control.serving.private: the private Twisted/Daphne/h2 names the serving adjustments replace or
read exist in the installed versions; this test is what fails when an upgrade removes one."""

from __future__ import annotations

import pytest
from twisted.web import http

from control.serving import private


def test_every_private_name_the_adjustments_rely_on_exists():
    assert private.missing() == []


def test_the_http2_names_are_checked_when_twisted_has_http2():
    assert private.h2_enabled() == http.H2_ENABLED  # pyproject asks for twisted[http2]
    assert private.h2_enabled()


def test_a_removed_class_level_name_is_reported(monkeypatch):
    monkeypatch.delattr(http.HTTPChannel, "totalHeadersSize")
    assert private.missing() == ["twisted.web.http:HTTPChannel.totalHeadersSize"]


def test_a_module_that_is_gone_is_reported(monkeypatch):
    monkeypatch.setattr(private, "ATTRIBUTES", [*private.ATTRIBUTES, ("twisted.web._gone", "Thing")])
    assert private.missing() == ["twisted.web._gone:Thing"]


def test_a_removed_class_attribute_is_reported(monkeypatch):
    from twisted.web import _http2

    monkeypatch.delattr(_http2.H2Connection, "_handleWindowUpdate")
    assert "twisted.web._http2:H2Connection._handleWindowUpdate" in private.missing()


def test_an_attribute_the_constructor_no_longer_sets_is_reported(monkeypatch):
    from twisted.web import _http2

    made = _http2.H2Connection.__init__

    def without_sending_deferred(self, *args, **kwargs):
        made(self, *args, **kwargs)
        del self._sendingDeferred

    monkeypatch.setattr(_http2.H2Connection, "__init__", without_sending_deferred)
    assert private.missing() == ["H2Connection()._sendingDeferred"]


def test_a_failing_constructor_is_reported_not_raised(monkeypatch):
    def broken(self, *args, **kwargs):
        raise TypeError("new signature")

    monkeypatch.setattr(http.HTTPChannel, "__init__", broken)
    assert private.missing() == ["instances: TypeError: new signature"]


def test_install_logs_what_is_missing(monkeypatch, caplog):
    monkeypatch.setattr(private, "missing", lambda: ["twisted.web.http:Gone"])
    private.report()
    assert "twisted.web.http:Gone" in caplog.text


@pytest.mark.parametrize("listed", [private.ATTRIBUTES, private.H2_ATTRIBUTES])
def test_the_lists_name_private_or_replaced_names_only_once(listed):
    assert len(set(listed)) == len(listed)
