"""The etcd role: the one write path (`store`), the version log and its compaction, the change feed
(`feed`: in-process, PostgreSQL LISTEN/NOTIFY) and the database thread with group commit (`db`).

It knows no HTTP: the API server, the extras and the bootstrap are its callers.
"""
