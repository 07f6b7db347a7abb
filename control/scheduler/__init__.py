"""The scheduler: a spoke that watches pods and nodes through the hub and binds each unscheduled
pod to one node it fits on. It never touches the store; its one write is `pods/NAME/binding`.

Modules: `demand` (what a pod asks for, what a node offers), `filter` (may this pod go there, and
why not), `interpod` (what the other pods say: pod affinity, topology spread), `score` (where is
best), `cache` (per-node sums, assumed pods), `scheduler` (informers, handlers, `reconcile(key)`,
the process entry point).
"""
