"""The simulated registry's rule: published references pull, clear typos are "not found"."""

from __future__ import annotations

import pytest

from control.clock import FakeClock
from control.kubelet.images import Catalogue, ImageFacts, builtin, parse_reference
from control.kubelet.pulls import ImageManager, pull_error
from control.kubelet.registry import listed_tag, mistyped_tag, near_miss, official_shape, osa_distance, resolve
from tests.kubelet.test_images import caches, ensure, pod

REDIS_DIGEST = "sha256:cb111d1bd870a6a471385a4a69ad17469d326e9dd91e0e455350cacf36e1b3ee"

# Images kubernetes.io's examples and tutorials name, lightkube's tests and Docker's official images
# with tags they publish (issue 24's list first).
PUBLISHED = [
    "paulczar/gb-frontend:v5", f"registry.k8s.io/redis@{REDIS_DIGEST}", "gcr.io/google-samples/hello-go-gke:1.0",
    "gcr.io/google-containers/fluentd-elasticsearch:1.20", "k8s.gcr.io/fluentd-elasticsearch:1.20",
    "registry.k8s.io/fluentd-elasticsearch:1.20", "bash", "bash:5", "bash:5.2.37-alpine3.20", "nginx:1.21.4",
    "nginx:1.14.2", "nginx:1.16.1", "nginx:1.7.9", "nginx:stable-alpine", "nginx:1.25.3-alpine",
    "busybox:1.28", "busybox:1.27.2", "registry.k8s.io/busybox:1.27.2", "perl:5.34.0", "redis:5.0.4",
    "mysql:5.6", "mysql:8.0", "wordpress:4.8-apache", "wordpress:6.2.1-apache", "ubuntu:14.04", "node:6.9.2",
    "registry.k8s.io/pause:2.0", "registry.k8s.io/nginx-slim:0.8", "registry.k8s.io/kubernetes-zookeeper:1.0-3.4.10",
    "gcr.io/google-samples/cassandra:v13", "gcr.io/google_samples/gb-frontend:v4", "gcr.io/google-samples/xtrabackup:1.0",
    "quay.io/fluentd_elasticsearch/fluentd:v2.5.2", "registry.k8s.io/e2e-test-images/agnhost:2.39",
    "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.3", "gcr.io/kuar-demo/kuard-amd64:1",
    "elasticsearch:8.15.0", "python:3.12-slim-bookworm", "php:8.3-apache", "tomcat:10.1-jdk17", "mongo:4.2",
    "postgres:10.1", "alpine:3.13", "registry.k8s.io/redis:e2e", f"nginx@{REDIS_DIGEST}", "myorg/init:1",
    "ghcr.io/someone/app:test", "us-central1-docker.pkg.dev/proj/repo/app:2024.1",
]

# Clear typos: a misspelt name, tag or path segment.
MISTYPED = [
    "ngnix:latestt", "ngnix", "nginx:latestt", "nginx:lastest", "bitnami/ngnix", "busybx", "bsah",
    "gcr.io/google-smaples/hello-app:1.0", "gcr.io/google-samples/hello-ap:1.0", "paulczar/gb-frontend:latset",
    "redis:alpnie", "bash:foo", "nginx:2.0", "nginx:1.99", "postgres:16.4.1", "gcr.io/google-samples/hello-app:3.0",
]


@pytest.mark.parametrize("image", PUBLISHED)
def test_published_references_pull(image):
    assert pull_error(builtin(), parse_reference(image), set()) is None, image


@pytest.mark.parametrize("image", MISTYPED)
def test_clear_typos_are_not_found(image):
    ref = parse_reference(image)
    assert pull_error(builtin(), ref, set()) == (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": failed to resolve '
        f'reference "{ref}": {ref}: not found')


def test_the_library_namespace_holds_only_official_images():
    # kubernetes.io writes gcr.io/google-samples/hello-go-gke: a bare name is Docker Hub's library/,
    # where only Docker's official images live
    assert resolve(builtin(), parse_reference("hello-go-gke:1.0")) is None
    assert resolve(builtin(), parse_reference("elasticsearch:8.15.0")).repository == "docker.io/library/elasticsearch"


def test_a_registry_only_catalogue_entries_name_holds_only_those():
    assert resolve(builtin(), parse_reference("registry.kitchen.local/secret-recipes/sauce:1.0")) is not None
    assert resolve(builtin(), parse_reference("registry.kitchen.local/secret-recipes/soup:1.0")) is None


def test_an_unknown_host_is_still_no_such_host():
    error = pull_error(builtin(), parse_reference("regsitry.k8s.io/pause:3.10"), set())
    assert "dial tcp: lookup regsitry.k8s.io: no such host" in error


def test_a_listed_repository_has_its_tags_and_the_versions_of_its_listed_series():
    facts = ImageFacts("docker.io/library/app", frozenset({"latest", "1.4", "1.6.2", "1.6.2-alpine", "2"}))
    assert listed_tag(facts, "1.6.2") and listed_tag(facts, "1.5.9") and listed_tag(facts, "1.6.0-alpine")
    assert listed_tag(facts, "2.6"), "the newest series 2 reaches as far as 2.x"
    assert not listed_tag(facts, "1.3"), "older than the oldest listed"
    assert not listed_tag(facts, "3"), "a series newer than the newest listed"
    assert not listed_tag(facts, "1.6.2.1"), "more dotted parts than any listed version"
    assert not listed_tag(facts, "1.6-slim"), "a suffix none of its tags uses"
    assert not listed_tag(facts, "v1.6"), "a v-prefix its tags do not use"
    assert not listed_tag(facts, "edge")


def test_the_official_shape_and_slips_of_channel_words():
    assert official_shape("5.2-alpine3.20") and official_shape("latest") and official_shape("lts-jdk21")
    assert not official_shape("latestt") and not official_shape("mybuild")
    assert mistyped_tag("latestt") and mistyped_tag("1.2-alpnie") and not mistyped_tag("local")
    assert not mistyped_tag("test") and not mistyped_tag("v5") and not mistyped_tag("e2e")


def test_near_misses_by_length():
    assert osa_distance("ngnix", "nginx") == 1 and osa_distance("kitten", "sitting") == 3
    assert near_miss("ngnix", "nginx") and near_miss("busybx", "busybox") and near_miss("bsah", "bash")
    assert not near_miss("init", "unit"), "four letters: only a swap of two neighbours"
    assert not near_miss("php", "pip") and not near_miss("nginx", "nginx")
    assert not near_miss("google_samples", "google-samples"), "the same name with other separators"
    assert near_miss("hello-ap", "hello-app") and not near_miss("nginx-slim", "nginx")


def test_private_and_configmap_images_keep_their_rules():
    catalogue = Catalogue({"docker.io/team/secret": ImageFacts("docker.io/team/secret", frozenset({"1.0"}),
                                                                private=True)})
    assert "pull access denied" in pull_error(catalogue, parse_reference("team/secret:1.0"), set())
    assert pull_error(catalogue, parse_reference("team/secret:1.0"), {"docker.io"}) is None
    assert pull_error(catalogue, parse_reference("team/secret:9.0"), {"docker.io"}).endswith("not found")


def test_the_pulled_event_tells_a_size_for_an_image_the_catalogue_does_not_list():
    manager = ImageManager(FakeClock(), caches())
    assert ensure(manager, pod("paulczar/gb-frontend:v5"), 0.0).hold is None
    *_, event = manager.started_events("u1", "c", "paulczar/gb-frontend:v5")
    assert event[1] == "Pulled" and "Image size: 10000000 bytes." in event[2]
