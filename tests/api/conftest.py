"""The in-process hub client every API test module starts from."""

import pytest

from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient


@pytest.fixture
def api():
    cluster_bootstrap()
    client = ApiClient()
    yield client
    client.close()
