"""The front door's routing as ingress-nginx's: the class filter, hosts (exact before wildcard,
the catch-all server for the rest), Exact/Prefix/ImplementationSpecific paths, longest match,
the Ingresses' default backends, and the oldest Ingress keeping a host+path two of them name."""

from __future__ import annotations

import pytest

from control.frontdoor.routing import Backend, build, handles, our_classes, strip_port

CONTROLLER = "kubekitchen.dev/ingress"


def ingress(name: str, *, rules=(), default=None, created="2026-01-01T00:00:00Z", namespace="default",
            class_name=None, annotations=None) -> dict:
    spec: dict = {"rules": list(rules)}
    if default:
        spec["defaultBackend"] = {"service": {"name": default, "port": {"number": 80}}}
    if class_name:
        spec["ingressClassName"] = class_name
    return {"metadata": {"name": name, "namespace": namespace, "creationTimestamp": created,
                         "annotations": annotations or {}}, "spec": spec}


def rule(host=None, *paths) -> dict:
    out: dict = {"http": {"paths": [{"path": p, "pathType": t, "backend": {"service": {"name": s, "port": {"number": 80}}}}
                                    for p, t, s in paths]}}
    if host:
        out["host"] = host
    return out


def service(routes, host: str, path: str) -> str | None:
    found = routes.match(host, path)
    return found.service if found else None


def test_prefix_matches_element_wise_and_exact_only_itself():
    routes = build([ingress("a", rules=[rule("menu.example", ("/soup", "Prefix", "soup"), ("/tea", "Exact", "tea"),
                                             ("/cake/", "Prefix", "cake"))])])
    assert [service(routes, "menu.example", p) for p in ("/soup", "/soup/", "/soup/x", "/soups")] == \
        ["soup", "soup", "soup", None]
    assert [service(routes, "menu.example", p) for p in ("/tea", "/tea/", "/teapot")] == ["tea", None, None]
    assert [service(routes, "menu.example", p) for p in ("/cake", "/cake/", "/cake/x")] == ["cake"] * 3


def test_implementation_specific_is_a_plain_prefix_and_root_matches_all():
    routes = build([ingress("a", rules=[rule("h.example", ("/s", "ImplementationSpecific", "s"),
                                             ("/", "Prefix", "root"))])])
    assert service(routes, "h.example", "/soup") == "s"
    assert service(routes, "h.example", "/x/y") == "root"


def test_longest_match_wins_then_exact_before_prefix():
    routes = build([ingress("a", rules=[rule(None, ("/a", "Prefix", "short"), ("/a/b", "Prefix", "long"),
                                             ("/a/b", "Exact", "exact"), ("/a/bc", "ImplementationSpecific", "impl"))])])
    assert service(routes, "x", "/a/b") == "exact"
    assert service(routes, "x", "/a/b/c") == "long"
    assert service(routes, "x", "/a/bcd") == "impl"
    assert service(routes, "x", "/a/z") == "short"


def test_hosts_exact_before_wildcard_one_label_and_catch_all():
    routes = build([ingress("a", rules=[rule("*.example", ("/", "Prefix", "wild")),
                                        rule("menu.example", ("/", "Prefix", "menu")),
                                        rule(None, ("/", "Prefix", "any"))])])
    assert service(routes, "menu.example", "/") == "menu"
    assert service(routes, "MENU.example:8080", "/") == "menu"
    assert service(routes, "bar.example", "/") == "wild"
    assert service(routes, "a.bar.example", "/") == "any"  # a wildcard covers one label only
    assert service(routes, "example", "/") == "any"
    assert service(routes, "", "/") == "any"


def test_a_host_server_does_not_fall_back_to_the_catch_all_paths():
    routes = build([ingress("a", rules=[rule("menu.example", ("/soup", "Prefix", "soup")),
                                        rule(None, ("/", "Prefix", "any"))])])
    assert service(routes, "menu.example", "/salad") is None  # ingress-nginx: the default backend, 404


def test_default_backends():
    routes = build([ingress("b", rules=[rule("menu.example", ("/soup", "Prefix", "soup"))], default="fallback",
                            created="2026-01-02T00:00:00Z"),
                    ingress("a", default="first")])
    assert service(routes, "menu.example", "/salad") == "fallback"  # the Ingress's own, for its hosts
    assert service(routes, "other", "/x") == "first"  # the catch-all: the oldest Ingress with one
    assert build([ingress("c", rules=[rule("h", ("/", "Prefix", "s"))])]).match("nothing.here", "/") is None


def test_the_oldest_ingress_keeps_a_host_and_path_and_others_merge():
    routes = build([ingress("new", rules=[rule("h", ("/x", "Prefix", "new"), ("/y", "Prefix", "y"))],
                            created="2026-01-02T00:00:00Z"),
                    ingress("old", rules=[rule("h", ("/x", "Prefix", "old"))])])
    assert service(routes, "h", "/x") == "old"
    assert service(routes, "h", "/y") == "y"
    assert routes.match("h", "/x") == Backend("default", "old", 80, "default/old")
    assert routes.hosts() == ["h"]


def test_port_names_and_resource_backends():
    ing = ingress("a")
    ing["spec"]["rules"] = [{"http": {"paths": [
        {"path": "/n", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"name": "web"}}}},
        {"path": "/r", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]
    routes = build([ing])
    assert routes.match("x", "/n").port == "web"
    assert routes.match("x", "/r") is None


@pytest.mark.parametrize("ing,served", [
    (ingress("a", class_name="kitchen"), True),
    (ingress("a", class_name="other"), False),
    (ingress("a", annotations={"kubernetes.io/ingress.class": "kitchen"}), True),
    (ingress("a"), True),  # no class: ours while our class is the default
])
def test_the_class_filter(ing, served):
    classes = [{"metadata": {"name": "kitchen", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
                "spec": {"controller": CONTROLLER}},
               {"metadata": {"name": "other"}, "spec": {"controller": "example.com/other"}}]
    assert handles(ing, our_classes(classes, CONTROLLER)) is served


def test_no_class_and_no_default_class_is_not_ours():
    classes = our_classes([{"metadata": {"name": "kitchen"}, "spec": {"controller": CONTROLLER}}], CONTROLLER)
    assert not handles(ingress("a"), classes)


def test_strip_port():
    assert [strip_port(h) for h in ("a.b:80", "a.b", "[::1]:80", "::1")] == ["a.b", "a.b", "::1", "::1"]


def test_rewrite_target_as_ingress_nginx_turns_the_path_into_the_annotations_target():
    minimal = ingress("minimal-ingress", rules=[rule(None, ("/testpath", "Prefix", "test"))],
                      annotations={"nginx.ingress.kubernetes.io/rewrite-target": "/"})
    routes = build([minimal])
    assert routes.route("127.0.1.1", "/testpath") == (routes.match("x", "/testpath"), "/")
    assert routes.route("127.0.1.1", "/testpath/a?b=1")[1] == "/?b=1"  # the query string is kept
    groups = ingress("groups", rules=[rule("menu.example", ("/soup(/|$)(.*)", "ImplementationSpecific", "soup"))],
                     annotations={"nginx.ingress.kubernetes.io/rewrite-target": "/$2"})
    backend, seen_as = build([groups]).route("menu.example", "/soup/tomato")
    assert backend.service == "soup" and seen_as == "/tomato"
    plain = build([ingress("plain", rules=[rule(None, ("/soup", "Prefix", "soup"))])])
    assert plain.route("any", "/soup/x?y=2") == (plain.match("any", "/soup/x"), "/soup/x?y=2")
    assert plain.route("any", "/cake") == (None, "/cake")
