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
