"""The restaurant of the seed story, running on the cluster as two custom kinds and two spokes.

An `Order` (the order slip: `spec: {menu: pasta, count: 2}`) is cooked by the line cook, who keeps
exactly `count` `Dish` objects for it, and garnished by the garnish cook. The cooks never talk to
each other: each only lists and watches through the hub (the waiter), and each writes its own
field of the slip's status (`cooked`, `garnished`). A dish dropped on the floor (a deleted Dish)
is cooked again, because the slip still says 2.

Modules: `manifests` (the two CustomResourceDefinitions and where they live), `install` (puts
them on a hub over HTTP), `slip` (pure helpers both cooks share), `linecook`, `garnishcook`, and
`cooks` (the spoke processes).
"""
