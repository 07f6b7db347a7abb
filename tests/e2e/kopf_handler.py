"""A kopf operator (someone else's framework) acting as a line cook for the restaurant's Orders.

Run by tests/e2e/test_kopf.py as `python -m kopf run --standalone --namespace default kopf_handler.py`
against the hub: it only sees the Kubernetes API, so it proves a foreign spoke works.
"""

import kopf

GROUP, VERSION, PLURAL = "kitchen.kubekitchen.dev", "v1", "orders"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.watching.server_timeout = 30  # the hub ends each watch after this; kopf resumes it


@kopf.on.create(GROUP, VERSION, PLURAL)
def cook(body, spec, patch, logger, **_):
    """A new slip: say every dish is cooked (the status subresource, schema fields only)."""
    patch.status["cooked"] = spec["count"]
    patch.status["phase"] = "Cooked"
    logger.info("kopf cooked %s %s", spec["count"], spec["menu"])
    kopf.info(body, reason="Cooked", message=f"kopf cooked {spec['count']} {spec['menu']}")  # a core/v1 Event


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.count")
def recount(body, old, new, patch, logger, **_):
    """The slip's count changed: follow it."""
    patch.status["cooked"] = new
    logger.info("kopf recounted %s -> %s", old, new)
    kopf.info(body, reason="Recounted", message=f"kopf recounted {old} -> {new}")


@kopf.on.delete(GROUP, VERSION, PLURAL)
def clear_table(body, logger, **_):
    """The slip is being deleted: kopf's finalizer held it until this handler ran."""
    logger.info("kopf cleared %s", body["metadata"]["name"])
