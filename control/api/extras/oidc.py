"""The two OpenID Connect discovery documents of ServiceAccount tokens (kube-apiserver's
`/.well-known/openid-configuration` and `/openid/v1/jwks`), so anyone can verify a token the hub
signed without asking the hub.

Guarantees: the configuration names the tokens' issuer, the JWKS address under it, the signing
key's algorithm (ES256, or RS256 for an older folder's RSA key) and the `public` subject type, as
upstream; the key set holds the hub's one signing key (made on first
use in the data folder) with upstream's `kid`. Both are plain reads: no store access.
"""

from __future__ import annotations

import asyncio
import json

from django.conf import settings

from control import keys
from control.api.request import Request, Route
from control.api.responses import Reply, json_response
from control.kinds.tokens import ISSUER

JWKS_PATH = "/openid/v1/jwks"
JWKS_MEDIA_TYPE = "application/jwk-set+json"


def openid_configuration(issuer: str = ISSUER) -> dict[str, object]:
    algorithm = keys.algorithm(keys.signing_key(settings.DATA_DIR).public_key())
    return {"issuer": issuer, "jwks_uri": issuer + JWKS_PATH, "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": [algorithm]}


def key_set() -> dict[str, object]:
    return {"keys": [keys.jwk(keys.signing_key(settings.DATA_DIR).public_key())]}


async def configuration(request: Request) -> Reply:
    request.tag = {"verb": "get", "resource": request.path}
    return json_response(await asyncio.to_thread(openid_configuration))  # the first read may make the key


async def jwks(request: Request) -> Reply:
    request.tag = {"verb": "get", "resource": request.path}
    document = await asyncio.to_thread(key_set)  # the first read may make the key
    return Reply(200, json.dumps(document, separators=(",", ":")).encode(), JWKS_MEDIA_TYPE)


ROUTES: tuple[Route, ...] = (
    Route(r"/\.well-known/openid-configuration", configuration),
    Route(JWKS_PATH, jwks),
)
