"""The Secret kind's strategy as pure functions: stringData folded into data, base64 and key rules,
the keys each well-known type requires, immutability, printing."""

from __future__ import annotations

import base64
import copy

from control.kinds.secrets import (
    SECRET, bad_base64_at, decoded, go_json_error, secret_defaults, validate_secret, validate_secret_update,
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(type_: str | None = None, **data: str) -> dict:
    body: dict = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
                  "data": {k.replace("__", "."): v for k, v in data.items()}}
    if type_:
        body["type"] = type_
    return body


def fields(causes: list[dict]) -> list[str]:
    return [c["field"] for c in causes]


def test_string_data_is_merged_into_data_and_never_kept():
    obj = secret(a=b64("old"), b=b64("kept"))
    obj["stringData"] = {"a": "new", "c": "ü"}
    secret_defaults(obj)
    assert "stringData" not in obj and obj["type"] == "Opaque"
    assert obj["data"] == {"a": b64("new"), "b": b64("kept"), "c": b64("ü")}
    again = copy.deepcopy(obj)
    secret_defaults(again)
    assert again == obj, "defaulting twice changes nothing"


def test_data_values_must_be_base64_and_keys_config_keys():
    causes = validate_secret(secret(good=b64("x"), bad="not base64!", short="abc"))
    assert fields(causes) == ["data[bad]", "data[short]"]
    assert causes[0]["message"] == 'Invalid value: "<secret contents redacted>": illegal base64 data at input byte 3'
    assert "not base64" not in str(causes), "a secret value is never echoed"
    assert fields(validate_secret({"metadata": {}, "type": "Opaque", "data": {"a/b": ""}})) == ["data[a/b]"]
    assert decoded("") == b"" and decoded("YQ==") == b"a" and decoded("YQ") is None
    assert bad_base64_at("YWJj*") == 4 and bad_base64_at("YWJjZA") == 4


def test_well_known_types_require_their_keys():
    assert fields(validate_secret(secret("kubernetes.io/tls", tls__crt=b64("c")))) == ["data[tls.key]"]
    assert validate_secret(secret("kubernetes.io/tls", tls__crt=b64("c"), tls__key=b64("k"))) == []
    assert fields(validate_secret(secret("kubernetes.io/dockerconfigjson"))) == ["data[.dockerconfigjson]"]
    broken = validate_secret(secret("kubernetes.io/dockerconfigjson", __dockerconfigjson=b64("{nope")))
    assert fields(broken) == ["data[.dockerconfigjson]"] and "invalid character 'n'" in broken[0]["message"]
    assert validate_secret(secret("kubernetes.io/dockerconfigjson", __dockerconfigjson=b64('{"auths": {}}'))) == []
    assert fields(validate_secret(secret("kubernetes.io/basic-auth"))) == ["data[username]", "data[password]"]
    assert validate_secret(secret("kubernetes.io/basic-auth", password=b64("p"))) == []
    token = secret("kubernetes.io/service-account-token")
    assert fields(validate_secret(token)) == ["metadata.annotations[kubernetes.io/service-account.name]"]
    token["metadata"]["annotations"] = {"kubernetes.io/service-account.name": "default"}
    assert validate_secret(token) == [] and validate_secret(secret("example.com/anything")) == []


def test_go_json_errors_carry_no_python_wording():
    assert go_json_error(b"") == "unexpected end of JSON input"
    assert go_json_error(b'{"a": ') == "unexpected end of JSON input"
    assert go_json_error(b"[1]") == "json: cannot unmarshal array into Go value of type map[string]interface {}"
    assert go_json_error(b"{}") == ""


def test_type_is_immutable_and_an_immutable_secrets_data_too():
    old = secret("Opaque", a=b64("1"))
    changed_type = secret("kubernetes.io/basic-auth", a=b64("1"))
    assert validate_secret_update(changed_type, old) == [
        {"reason": "FieldValueInvalid", "field": "type", "message": 'Invalid value: "kubernetes.io/basic-auth": field is immutable'}]
    assert validate_secret_update(secret("Opaque", a=b64("2")), old) == [], "a mutable secret's data may change"
    old["immutable"] = True
    new = secret("Opaque", a=b64("2"))
    new["immutable"] = True
    assert [(c["field"], c["message"]) for c in validate_secret_update(new, old)] == [
        ("data", "Forbidden: field is immutable when `immutable` is set")]
    unlocked = secret("Opaque", a=b64("1"))
    assert fields(validate_secret_update(unlocked, old)) == ["immutable"]


def test_columns_and_field_selector():
    assert [c.name for c in SECRET.columns] == ["Name", "Type", "Data", "Age"]
    obj = secret("Opaque", a=b64("1"), b=b64("2"))
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    assert SECRET.row(obj, 1767225600 + 90) == ["s", "Opaque", 2, "90s"]
    assert SECRET.field_getters["type"](obj) == "Opaque"
