"""Field table of scheduling.k8s.io/v1 PriorityClass (what `kubectl create priorityclass` POSTs).

Numbers from k8s.io/api/scheduling/v1 generated.proto; `value` has no omitempty (a class of
value 0 shows `value: 0`) and `preemptionPolicy` is a Go pointer. Format: see
`control.api.protobuf.schema`.
"""

SCHEDULING = {
    "PriorityClass": ("1 metadata ObjectMeta, 2 value int!, 3 globalDefault bool, 4 description str, "
                      "5 preemptionPolicy str?"),
}
