"""The in-process hub client every API test module starts from."""

import pytest

from control.auth import policystore
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient


@pytest.fixture
def api():
    policystore.forget()
    cluster_bootstrap()
    client = ApiClient()
    yield client
    client.close()
