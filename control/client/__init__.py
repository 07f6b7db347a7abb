"""The spoke toolkit: everything a component needs to take part through the hub, and nothing more.

A component imports only this package (and `control.kinds` / `control.errors` for pure helpers):
an HTTP client, informers (list + watch + relist into a read-only cache), a workqueue, a runner
that ties them to a `reconcile(key)`, expectations, and an event recorder.
"""
