"""Twisted's HTTP/2 server (what Daphne serves `h2` with on the HTTPS port), corrected where a hub needs it.

Twisted 26.10's H2Connection sends each stream's queued DATA from a loop that reschedules itself on
every reactor turn while the priority tree yields a stream. A stream whose flow-control window is
spent (its client does not read it: a stuck watcher) but which still has data queued is never
marked blocked, so the loop finds it again and again, sends nothing, and spins a CPU until the
client reads or the stream ends. Measured on a hub: one such watcher took it from ~1 % to the whole
of a core's share.

Guarantees, after `install()` (idempotent): a stream with DATA queued and no window left is blocked
in the priority tree, so the sending loop sleeps; the client's WINDOW_UPDATE (for the stream or the
connection) unblocks it as Twisted already does and wakes the sleeping loop (Twisted wakes it only on
a new write: it relied on the spinning), and an END_STREAM alone in the queue is never held back. Nothing else in Twisted's behaviour changes. Without Twisted's HTTP/2 support, nothing is done.
"""

from __future__ import annotations

from typing import Any


def install() -> None:
    """Patch Twisted's H2Stream so a stream out of window stops the sending loop (see the module)."""
    try:
        from twisted.web import _http2
    except ImportError:  # no h2/priority: the HTTPS port serves HTTP/1.1 only
        return
    stream_class = _http2.H2Stream
    if getattr(stream_class, "_kk_blocks_when_out_of_window", False):
        return
    blocked = stream_class.flowControlBlocked

    def flow_control_blocked(self: Any) -> None:
        # Twisted calls this when the window cannot take all that is queued, after a send and after
        # a write; block the stream only once nothing at all can go (window 0) and data waits.
        connection = self._conn
        queue = connection._outboundStreamQueues.get(self.streamID)
        if (queue and queue[0] is not _http2._END_STREAM_SENTINEL
                and connection.conn.local_flow_control_window(self.streamID) <= 0):
            connection.priority.block(self.streamID)
        blocked(self)

    connection_class = _http2.H2Connection
    window_updated = connection_class._handleWindowUpdate

    def handle_window_update(self: Any, event: Any) -> None:
        window_updated(self, event)
        waiting = self._sendingDeferred
        if waiting is not None:  # the loop sleeps: let it look again (it sleeps again if all are blocked)
            self._sendingDeferred = None
            waiting.callback(event.stream_id)

    stream_class.flowControlBlocked = flow_control_blocked
    connection_class._handleWindowUpdate = handle_window_update
    stream_class._kk_blocks_when_out_of_window = True
