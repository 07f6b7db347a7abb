"""The etcd role: the one write path (`store`), the version log and its compaction, reads at a
revision (`snapshot`: a list as it was at any revision still in the log's window), the change feed
(`feed`: in-process, PostgreSQL LISTEN/NOTIFY) and the database thread with group commit (`db`).

It knows no HTTP: the API server, the extras and the bootstrap are its callers. Its background work
(the feed's poll and catch-up, log compaction, the LISTEN connection) starts and stops with the
server's lifespan (`feed.start_feed` / `feed.stop_feed`), never inside a request.
"""
