"""The restaurant's two kinds as CustomResourceDefinitions, and where their objects live on the hub.

Guarantees: `ORDER_CRD` and `DISH_CRD` are complete `apiextensions.k8s.io/v1` manifests
(namespaced, one served and stored version `v1`, structural schemas whose enum, minimum and
maximum the hub enforces, the status subresource, printer columns, short names and the `kitchen`
category), so `kubectl get orders`, `kubectl get ord`, `kubectl get kitchen` and `kubectl explain
order.spec` work once they are installed. `ORDERS` and `DISHES` are the toolkit's `Resource`s
for them; `ORDER_LABEL` ties a Dish to its Order by name.
"""

from __future__ import annotations

from typing import Any

from control.client.resources import Resource

GROUP = "kitchen.kubekitchen.dev"
VERSION = "v1"
ORDERS = Resource(GROUP, VERSION, "orders", "Order")
DISHES = Resource(GROUP, VERSION, "dishes", "Dish")
API_VERSION = ORDERS.api_version
ORDER_LABEL = f"{GROUP}/order"  # on every Dish: the name of the Order it was cooked for
MENU = ["pasta", "pizza", "risotto", "salad", "soup"]
MAX_COUNT = 10  # a slip asks for at most this many dishes (a visible validation limit)
PHASES = ["Cooking", "Cooked", "Garnished"]

AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def _crd(kind: str, plural: str, singular: str, short: str, spec: dict[str, Any], status: dict[str, Any],
         columns: list[dict[str, Any]], description: str) -> dict[str, Any]:
    schema = {"type": "object", "description": description,
              "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                             "metadata": {"type": "object"}, "spec": spec, "status": status}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": singular,
                      "shortNames": [short], "categories": ["kitchen"]},
            "versions": [{"name": VERSION, "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": schema},
                          "subresources": {"status": {}},
                          "additionalPrinterColumns": columns + [AGE]}],
        },
    }


ORDER_CRD = _crd(
    "Order", "orders", "order", "ord",
    spec={"type": "object", "required": ["menu", "count"], "description": "The order slip: what and how many.",
          "properties": {
              "menu": {"type": "string", "enum": MENU, "description": "The dish to cook."},
              "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT,
                        "description": "How many dishes the table wants."}}},
    status={"type": "object", "description": "Written by the cooks, each its own field.",
            "properties": {
                "cooked": {"type": "integer", "minimum": 0, "description": "Dishes cooked (the line cook)."},
                "garnished": {"type": "integer", "minimum": 0, "description": "Dishes garnished (the garnish cook)."},
                "phase": {"type": "string", "enum": PHASES, "description": "Cooking, Cooked or Garnished."},
                "observedGeneration": {"type": "integer", "description": "The slip's generation the line cook saw."}}},
    columns=[{"name": "Menu", "type": "string", "jsonPath": ".spec.menu"},
             {"name": "Count", "type": "integer", "jsonPath": ".spec.count"},
             {"name": "Cooked", "type": "integer", "jsonPath": ".status.cooked"},
             {"name": "Garnished", "type": "integer", "jsonPath": ".status.garnished"},
             {"name": "Phase", "type": "string", "jsonPath": ".status.phase", "priority": 1}],
    description="An order slip of the restaurant: the desired state the cooks work towards.",
)

DISH_CRD = _crd(
    "Dish", "dishes", "dish", "dsh",
    spec={"type": "object", "required": ["menu", "order"], "description": "What was cooked, for which order.",
          "properties": {
              "menu": {"type": "string", "enum": MENU},
              "order": {"type": "string", "minLength": 1, "description": "The name of the Order."}}},
    status={"type": "object", "properties": {
        "garnished": {"type": "boolean", "description": "The garnish cook has finished this dish."},
        "garnishedAt": {"type": "string", "format": "date-time"}}},
    columns=[{"name": "Menu", "type": "string", "jsonPath": ".spec.menu"},
             {"name": "Order", "type": "string", "jsonPath": ".spec.order"},
             {"name": "Garnished", "type": "boolean", "jsonPath": ".status.garnished"}],
    description="One dish cooked for an Order by the line cook.",
)

CRDS = (ORDER_CRD, DISH_CRD)


def order(name: str, *, menu: str = "pasta", count: int = 2, namespace: str = "default") -> dict[str, Any]:
    """An order slip, ready to create."""
    return {"apiVersion": API_VERSION, "kind": "Order", "metadata": {"name": name, "namespace": namespace},
            "spec": {"menu": menu, "count": count}}
