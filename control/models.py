"""Stored objects and the version log: the etcd role.

Guarantees: only `control.storage.store` writes these tables. `Revision` holds the ONE global,
strictly increasing revision; every write takes the next value while holding that row, so
revisions are handed out in commit order (also with several writer processes on PostgreSQL).
`StoredObject.body` and `LogEntry.body` are the objects' JSON text exactly as served.
"""

from django.db import models


class Revision(models.Model):
    """The single counter row (id=1). `compacted` is the highest revision removed from the log."""

    value = models.BigIntegerField(default=0)
    compacted = models.BigIntegerField(default=0)


class StoredObject(models.Model):
    """The latest state of one object. `resource` is "<group>/<plural>" ("" group for core)."""

    resource = models.CharField(max_length=200)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64)
    revision = models.BigIntegerField()
    body = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["resource", "namespace", "name"], name="object_identity")
        ]


class LogEntry(models.Model):
    """One change: the full object snapshot after it, and the client that caused it."""

    revision = models.BigIntegerField(primary_key=True)
    event_type = models.CharField(max_length=10)
    resource = models.CharField(max_length=200)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    actor = models.CharField(max_length=200, blank=True, default="")
    created_at = models.FloatField(db_index=True)
    body = models.TextField()
