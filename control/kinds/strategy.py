"""The parts of a kind's write strategy that are more than one function: how it is deleted, what
it allocates (kube-apiserver's `RESTDeleteStrategy` with the store's `ReturnDeletedObject`, and the
Service registry's IP and port allocators) and what decoding against its schema found.

Guarantees: pure data and pure functions, as everything in `control.kinds`; the hub's write path
(`control.api`) calls these hooks and keeps the transactions and the reads of the store to itself,
so a kind never touches storage. The defaults describe the ordinary kind: deleted at once, no
grace period, nothing of its own holding the deletion, a `Status` (Success) as the DELETE answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Obj = dict[str, Any]
Cause = dict[str, str]


def no_grace(obj: Obj, requested: int | None) -> int:
    return 0


def never_held(obj: Obj) -> bool:
    return False


def nothing_on_hold(obj: Obj) -> None:
    return None


def always_deletable(obj: Obj) -> str:
    return ""


@dataclass(frozen=True)
class Deletion:
    """How DELETE treats one kind.

    - `grace_period(obj, requested)`: the seconds the object lingers with a deletionTimestamp
      (pods while a kubelet stops them); `requested` is DeleteOptions.gracePeriodSeconds or None.
    - `held(obj)` / `on_hold(obj)`: a hold of the kind's own beside metadata.finalizers (a
      Namespace's spec.finalizers) and what marking a held object changes (phase Terminating).
    - `returns_object`: the store's ReturnDeletedObject: the answer to a DELETE that removed the
      object is the object itself rather than a Status (pods, services, namespaces upstream).
    - `removes_served_objects`: deleting one removes the objects it serves, in the same
      transaction (a CustomResourceDefinition and its custom objects).
    - `refusal(obj)`: why this object may never be deleted ("" when it may): the namespaces
      upstream's NamespaceLifecycle admission keeps (`default`, `kube-system`, ...).
    """

    grace_period: Callable[[Obj, int | None], int] = no_grace
    held: Callable[[Obj], bool] = never_held
    on_hold: Callable[[Obj], None] = nothing_on_hold
    returns_object: bool = False
    removes_served_objects: bool = False
    refusal: Callable[[Obj], str] = always_deletable


IMMEDIATE = Deletion()


@dataclass(frozen=True)
class FieldReport:
    """What decoding a request's object as its kind's schema found (fieldValidation's input).

    - `obj`: the object with JSON nulls dropped where the schema does not keep them;
    - `type_error`: the 400 text when a value has the wrong JSON type ("" when none);
    - `unknown`: paths of the fields the schema does not declare, in order;
    - `pruned()`: `obj` without those fields (fieldValidation Ignore and Warn).
    """

    obj: Obj
    type_error: str
    unknown: list[str]
    pruned: Callable[[], Obj]


class RangeFull(Exception):
    """Every value an allocator may hand out is taken (the hub answers 500, as Kubernetes does)."""


@dataclass(frozen=True)
class Allocator:
    """Values a kind's objects must not share (a Service's cluster IP and node ports).

    - `scans`: the store key ("<group>/<plural>") whose stored objects hold what is taken.
    - `carry_over(new, old)`: before validation of an update, keep what was allocated when the
      client left it out and drop what the object no longer uses.
    - `allocate(obj, old, stored_bodies)`: after validation, fill in what the object needs;
      returns causes (422) for requested values that cannot be had. `stored_bodies()` returns the
      stored JSON of every object under `scans`; the hub calls it inside the write transaction,
      with writes held, and the allocator calls it only when there is something to choose.
    """

    scans: str
    carry_over: Callable[[Obj, Obj], None]
    allocate: Callable[[Obj, Obj | None, Callable[[], list[str]]], list[Cause]]


# A read-only look into the store the hub lends a kind's admission and actions:
# (store key "<group>/<plural>", namespace, name) -> the stored object, or None when there is none.
Lookup = Callable[[str, str, str], "Obj | None"]


# (store key "<group>/<plural>", namespace) -> every stored object of that kind in the namespace.
Lister = Callable[[str, str], "list[Obj]"]


def nothing_listed(resource: str, namespace: str) -> list[Obj]:
    return []


@dataclass(frozen=True)
class Lent:
    """What the hub lends a kind's own subresource handler for one request: read-only lookups
    (one object, or all of a kind in a namespace), the hub's time (epoch seconds) and its signer
    (claims -> a JWT signed with the hub's key), so the kind builds the answer and never touches the
    store or a key itself."""

    lookup: Lookup
    now: float
    sign: Callable[[dict[str, Any]], str]
    list: Lister = nothing_listed


@dataclass(frozen=True)
class Write:
    """A read-modify-write of another stored object an action asks for (the eviction's decrement
    of a PodDisruptionBudget): `mutate` gets a private copy of the object as stored at the moment
    of the write and returns the new object, or raises a `control.errors` error to refuse."""

    resource: str
    namespace: str
    name: str
    mutate: Callable[[Obj], Obj]


@dataclass(frozen=True)
class Outcome:
    """What an action that changes the cluster asks of the hub (upstream's eviction REST storage
    writes the budget, then deletes the pod), done in one transaction: all of it or none.

    - `answer`: the body of the 201 when everything succeeded;
    - `writes`: done first, in order;
    - `delete_parent`: DeleteOptions to delete the parent with, as a DELETE of it would (its grace
      period, preconditions, dryRun); None to leave it;
    - `on_conflict`: answered instead when deleting the parent meets a Conflict (a precondition
      the kind added itself, e.g. the resourceVersion it decided on);
    - `retry_on_conflict`: on such a Conflict, read the parent again and ask the kind anew
      (upstream's EvictionsRetry), a few times, instead of answering it;
    - `before_delete(parent)`: what the parent records in the same write as its deletion (an
      evicted pod's DisruptionTarget condition), on the parent as stored then.
    """

    answer: Obj
    writes: tuple[Write, ...] = ()
    delete_parent: Obj | None = None
    before_delete: Callable[[Obj], None] | None = None
    on_conflict: Exception | None = None
    retry_on_conflict: bool = False


@dataclass(frozen=True)
class Action:
    """A subresource a kind answers itself on POST (a ServiceAccount's `token`), as upstream's
    per-kind REST storage for a subresource.

    - `group`, `version`, `kind`: what the request body is and what comes back (discovery too);
    - `create(parent, body, lent)`: the answer (201) for the stored `parent` and the decoded body
      (type meta checked), or an `Outcome` when the action changes the cluster; it raises
      `control.errors` for a refusal.
    """

    group: str
    version: str
    kind: str
    create: Callable[[Obj, Obj, Lent], "Obj | Outcome"]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


# (resource of the object judged "<group>/<plural>", the object, the stored one on update or None,
# a lister of stored objects) -> why it is refused ("" when it is not).
Judge = Callable[[str, Obj, "Obj | None", Lister], str]


def no_judgement(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> str:
    return ""


# The same arguments -> the writes of other stored objects an admitted write records in its own
# transaction (a ResourceQuota's status.used charged with what the new object uses).
Charge = Callable[[str, Obj, "Obj | None", Lister], "list[Write]"]


def no_charge(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> "list[Write]":
    return []


@dataclass(frozen=True)
class Policy:
    """Admission that a kind's objects impose on the writes of other kinds: upstream's admission
    plugins that read policy objects (LimitRanger reads LimitRanges, ResourceQuota reads quotas).

    - `mutate`: on create, after the written kind's own admission; may change the object (a
      LimitRange's defaults); returns a refusal (403 Forbidden, `<resource> "<name>" is forbidden: ...`).
    - `validate`: after the object passed validation, on create (`old` None) and update; returns a
      refusal. The lister reads the store inside the write's transaction, with writes held, so
      what it decides from cannot change before the write commits.
    - `charge`: once every policy admitted the write (and not on a dry run), the writes of other
      objects done in the same transaction: upstream's quota status update with optimistic
      concurrency becomes, on one store, a read-modify-write with writes held.
    """

    name: str
    mutate: Judge = no_judgement
    validate: Judge = no_judgement
    charge: Charge = no_charge
