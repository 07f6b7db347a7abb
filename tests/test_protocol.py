"""The shared names have one home: hub, dashboard and page all take them from control.protocol."""

import json
from pathlib import Path

from control import protocol
from control.api import traffic
from control.api.extras import kitchen
from control.restaurant import manifests
from dashboard import presenters

ROOT = Path(__file__).resolve().parent.parent


def test_the_hub_publishes_on_the_shared_group():
    assert traffic.GROUP == protocol.TRAFFIC_GROUP == "kk.traffic"


def test_the_snapshot_kinds_are_the_kinds_the_dashboard_presents():
    assert kitchen.SNAPSHOT_KINDS == protocol.SNAPSHOT_KINDS
    assert set(presenters.PRESENTERS) == set(protocol.SNAPSHOT_KINDS)


def test_the_kitchen_group_is_the_restaurants():
    assert manifests.GROUP == protocol.KITCHEN_GROUP and manifests.ORDER_LABEL == protocol.ORDER_LABEL


def test_the_page_gets_the_names_from_the_server_not_from_a_copy():
    page = protocol.page_protocol()
    assert json.loads(page["snapshot_kinds"]) == list(protocol.SNAPSHOT_KINDS)
    scripts = {name: (ROOT / "static" / "dashboard" / name).read_text() for name in ("model.js", "custom.js")}
    assert '"replicasets"' not in scripts["model.js"] and "dataset.snapshotKinds" in scripts["model.js"]
    code = [line for line in scripts["custom.js"].splitlines() if not line.lstrip().startswith("//")]
    assert not any(protocol.KITCHEN_GROUP in line for line in code)
    assert "dataset.kitchenGroup" in scripts["custom.js"]
    for python in (ROOT / "dashboard").glob("*.py"):
        assert '"kk.traffic"' not in python.read_text(), python


def test_the_page_gets_the_record_types_from_the_server_not_from_a_copy():
    page = protocol.page_protocol()
    assert sorted(json.loads(page["record_types"]).values()) == sorted(protocol.RECORD_TYPES)
    template = (ROOT / "templates" / "dashboard" / "index.html").read_text()
    assert 'data-record-types="{{ protocol.record_types }}"' in template
    traffic = (ROOT / "static" / "dashboard" / "traffic.js").read_text()
    assert "dataset.recordTypes" in traffic
    for name in ("app.js", "traffic.js"):
        code = [line for line in (ROOT / "static" / "dashboard" / name).read_text().splitlines()
                if not line.lstrip().startswith("//")]
        for record_type in protocol.RECORD_TYPES:
            assert not any(f'"{record_type}"' in line for line in code), (name, record_type)
