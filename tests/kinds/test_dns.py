import pytest

from control.kinds.dns import NameNotFound, resolve, split_name

SERVICES = {
    ("default", "web"): {"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.12"}},
    ("shop", "db"): {"spec": {"type": "ClusterIP", "clusterIP": "None"}},
    ("default", "maps"): {"spec": {"type": "ExternalName", "externalName": "maps.example.com."}},
}
ENDPOINTS = {("shop", "db"): {"subsets": [{"addresses": [{"ip": "10.244.1.2"}, {"ip": "10.244.2.3"}],
                                          "notReadyAddresses": [{"ip": "10.244.3.4"}]}]}}


def ask(name, namespace="default"):
    return resolve(name, namespace, services=lambda ns, n: SERVICES.get((ns, n)),
                   endpoints=lambda ns, n: ENDPOINTS.get((ns, n)))


@pytest.mark.parametrize("name", ["web", "web.default", "web.default.svc", "web.default.svc.cluster.local",
                                  "WEB.default.svc.cluster.local."])
def test_every_form_of_a_service_name_answers_its_cluster_ip(name):
    answer = ask(name)
    assert (answer.type, answer.records, answer.name) == ("A", ["10.96.0.12"], "web.default.svc.cluster.local")


def test_a_short_name_is_searched_in_the_askers_namespace():
    with pytest.raises(NameNotFound):
        ask("web", "shop")
    assert ask("web.default", "shop").records == ["10.96.0.12"]


def test_headless_answers_ready_pod_ips_only():
    answer = ask("db.shop")
    assert answer.headless and answer.records == ["10.244.1.2", "10.244.2.3"]


def test_external_name_is_a_cname():
    answer = ask("maps")
    assert (answer.type, answer.records) == ("CNAME", ["maps.example.com"])


@pytest.mark.parametrize("name", ["nope", "web.default.svc.example.org", "a.b.c.d", "", "web..default"])
def test_anything_else_is_nxdomain(name):
    with pytest.raises(NameNotFound):
        ask(name)


def test_split_name():
    assert split_name("web.shop.svc", "default") == ("web", "shop")


# --- pod records under a headless Service (a StatefulSet's pods) -------------------------------

STS_SERVICES = {("default", "web"): {"spec": {"clusterIP": "None"}},
                ("default", "open"): {"spec": {"clusterIP": "None", "publishNotReadyAddresses": True}},
                ("default", "plain"): {"spec": {"clusterIP": "10.96.0.40"}}}
STS_ENDPOINTS = {
    ("default", "web"): {"subsets": [{"addresses": [{"ip": "10.244.0.5", "hostname": "web-0"},
                                                    {"ip": "10.244.0.6", "hostname": "web-1"}],
                                      "notReadyAddresses": [{"ip": "10.244.0.7", "hostname": "web-2"}]}]},
    ("default", "open"): {"subsets": [{"notReadyAddresses": [{"ip": "10.244.0.9", "hostname": "open-0"}]}]},
    ("default", "plain"): {"subsets": [{"addresses": [{"ip": "10.244.0.8", "hostname": "plain-0"}]}]},
}


def ask_sts(name, namespace="default"):
    return resolve(name, namespace, services=lambda ns, n: STS_SERVICES.get((ns, n)),
                   endpoints=lambda ns, n: STS_ENDPOINTS.get((ns, n)))


@pytest.mark.parametrize("name", ["web-0.web.default.svc.cluster.local", "web-0.web.default.svc.cluster.local.",
                                  "web-0.web.default.svc", "web-0.web.default", "web-0.web"])
def test_a_statefulset_pod_has_its_own_record_under_the_headless_service(name):
    answer = ask_sts(name)
    assert (answer.type, answer.records, answer.name) == ("A", ["10.244.0.5"], "web-0.web.default.svc.cluster.local")
    assert answer.service == "default/web" and answer.headless


def test_the_service_name_still_answers_every_ready_pod():
    assert ask_sts("web").records == ["10.244.0.5", "10.244.0.6"]


def test_a_not_ready_pod_has_no_record_unless_the_service_publishes_not_ready_addresses():
    with pytest.raises(NameNotFound):
        ask_sts("web-2.web.default.svc.cluster.local")
    assert ask_sts("open-0.open.default.svc.cluster.local").records == ["10.244.0.9"]


def test_no_pod_records_under_a_service_with_a_cluster_ip_or_for_unknown_hosts():
    with pytest.raises(NameNotFound):
        ask_sts("plain-0.plain.default.svc.cluster.local")
    with pytest.raises(NameNotFound):
        ask_sts("web-9.web.default.svc.cluster.local")
    with pytest.raises(NameNotFound):
        ask_sts("web-0.web.other.svc.cluster.local")
