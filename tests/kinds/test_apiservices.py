"""apiregistration.k8s.io/v1 APIService: upstream's validation messages, kubectl's columns, the
Local APIService the hub registers for each group version it serves."""

from __future__ import annotations

import pytest

from control.kinds.apiservices import (APISERVICE, apiservice_cells, apiservice_defaults, local_apiservice,
                                       validate_apiservice)


def service(name="v1alpha1.wardle.example.com", group="wardle.example.com", version="v1alpha1", **spec):
    body = {"metadata": {"name": name}, "spec": {"group": group, "version": version, "groupPriorityMinimum": 2000,
                                                  "versionPriority": 200, **spec}}
    apiservice_defaults(body)
    return body


def messages(body):
    return [f"{c['field']}: {c['message']}" for c in validate_apiservice(body)]


def test_a_local_and_a_service_backed_apiservice_are_valid():
    assert messages(service()) == []
    backed = service(service={"namespace": "wardle", "name": "api"})
    assert backed["spec"]["service"]["port"] == 443 and messages(backed) == []
    assert messages(service(name="v1.", group="", version="v1")) == []


@pytest.mark.parametrize("body, expected", [
    (service(name="v1.wrong"), 'metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: '
                               '"v1alpha1.wardle.example.com"'),
    (service(name="v2.", group="", version="v2"),
     "spec.group: Required value: only v1 may have an empty group and it better be legacy kube"),
    (service(groupPriorityMinimum=0), "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000"),
    (service(versionPriority=1001), "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000"),
    (service(caBundle="AAAA"), 'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle'),
    (service(service={"namespace": "w", "name": "api", "port": 70000}),
     "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"),
    (service(service={"name": "api"}), "spec.service.namespace: Required value"),
    (service(service={"namespace": "w", "name": "api"}, caBundle="AAAA", insecureSkipTLSVerify=True),
     "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"),
])
def test_validation_speaks_upstreams_messages(body, expected):
    assert expected in messages(body)


def test_kubectl_columns_and_the_local_apiservice():
    local = local_apiservice("apps", "v1", "u", "2030-01-01T00:00:00Z")
    assert local["metadata"]["name"] == "v1.apps" and messages(local) == []
    assert (local["spec"]["groupPriorityMinimum"], local["spec"]["versionPriority"]) == (17800, 15)
    assert [c.name for c in APISERVICE.columns] == ["Name", "Service", "Available", "Age"]
    assert apiservice_cells(local, 0)[1:3] == ["Local", "True"]
    core = local_apiservice("", "v1", "u", "2030-01-01T00:00:00Z")
    assert core["metadata"]["name"] == "v1." and core["spec"]["groupPriorityMinimum"] == 18000
    custom = local_apiservice("kitchen.kubekitchen.dev", "v1", "u", "2030-01-01T00:00:00Z")
    assert (custom["spec"]["groupPriorityMinimum"], custom["spec"]["versionPriority"]) == (1000, 100)
    missing = service(service={"namespace": "wardle", "name": "api"})
    missing["status"] = {"conditions": [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}]}
    assert apiservice_cells(missing, 0)[1:3] == ["wardle/api", "False (ServiceNotFound)"]
