"""SPDY/3.1 framing, the minimum kubectl's port-forward speaks (draft-mbelshe-httpbis-spdy-00, §2):
data frames and the control frames SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY,
HEADERS and WINDOW_UPDATE. There is no maintained SPDY library for Python; this is our own, checked
against bytes built by hand from the spec and against the real kubectl (moby/spdystream's framer).

Guarantees:
- `FrameParser.feed` takes bytes cut anywhere (a WebSocket message may hold half a frame, or
  several) and returns the whole frames they complete, in order; what is left waits for more.
- Name/value header blocks are zlib-compressed with the SPDY/3 dictionary, one compression context
  per direction for the whole connection (a `FrameWriter` and a `FrameParser` each keep theirs),
  each block ending on a sync flush, as the spec and Go's framer do. Names are written lowercase;
  several values of one name are NUL-separated.
- Anything that is not SPDY/3 (another version, a control frame whose length disagrees with its
  type, a header block that does not inflate or inflates past `MAX_HEADER_BLOCK`, stream id 0
  where one is required) raises `SpdyError`; the caller answers GOAWAY(PROTOCOL_ERROR). Control
  frames of an unknown type are skipped, as the spec asks.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Union

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN, FLAG_UNIDIRECTIONAL = 0x01, 0x02
# RST_STREAM status codes (§2.4.2) and GOAWAY status codes (§2.6.6)
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, UNSUPPORTED_VERSION, CANCEL, INTERNAL_ERROR = 1, 2, 3, 4, 5, 6
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2
MAX_LENGTH = (1 << 24) - 1
MAX_HEADER_BLOCK = 256 * 1024  # inflated; kubectl's blocks are a few dozen bytes
WORD = struct.Struct(">I")
TWO_WORDS = struct.Struct(">II")

_WORDS = ("options head post put delete trace accept accept-charset accept-encoding accept-language "
          "accept-ranges age allow authorization cache-control connection content-base content-encoding "
          "content-language content-length content-location content-md5 content-range content-type date etag "
          "expect expires from host if-match if-modified-since if-none-match if-range if-unmodified-since "
          "last-modified location max-forwards pragma proxy-authenticate proxy-authorization range referer "
          "retry-after server te trailer transfer-encoding upgrade user-agent vary via warning www-authenticate "
          "method get status").split() + ["200 OK"] + "version HTTP/1.1 url public set-cookie keep-alive origin".split()
_TAIL = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
         "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
         "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
         "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
         "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
         "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
# The SPDY/3 header compression dictionary (§2.6.10.1): length-prefixed words, then a plain tail.
DICTIONARY = b"".join(WORD.pack(len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()

Headers = dict[str, list[str]]


class SpdyError(Exception):
    """The peer does not speak SPDY/3 (a connection error: GOAWAY with PROTOCOL_ERROR)."""


@dataclass(frozen=True)
class Data:
    stream_id: int
    data: bytes = b""
    flags: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


@dataclass(frozen=True)
class SynStream:
    stream_id: int
    headers: Headers = field(default_factory=dict)
    flags: int = 0
    associated_to: int = 0
    priority: int = 0  # 0 (highest) to 7
    slot: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


@dataclass(frozen=True)
class SynReply:
    stream_id: int
    headers: Headers = field(default_factory=dict)
    flags: int = 0


@dataclass(frozen=True)
class RstStream:
    stream_id: int
    status: int


@dataclass(frozen=True)
class Settings:
    entries: tuple[tuple[int, int, int], ...] = ()  # (flags, id, value)
    flags: int = 0


@dataclass(frozen=True)
class Ping:
    ping_id: int


@dataclass(frozen=True)
class GoAway:
    last_good_stream_id: int
    status: int = GOAWAY_OK


@dataclass(frozen=True)
class HeadersFrame:
    stream_id: int
    headers: Headers = field(default_factory=dict)
    flags: int = 0


@dataclass(frozen=True)
class WindowUpdate:
    stream_id: int
    delta: int


Frame = Union[Data, SynStream, SynReply, RstStream, Settings, Ping, GoAway, HeadersFrame, WindowUpdate]


def header(headers: Headers, name: str) -> str:
    """The first value of `name` ('' when absent), as Go's http.Header.Get."""
    values = headers.get(name.lower()) or [""]
    return values[0]


def encode_header_block(headers: Headers) -> bytes:
    """The uncompressed name/value block (§2.6.10): count, then (length, name, length, value)."""
    parts = [WORD.pack(len(headers))]
    for name, values in headers.items():
        raw_name, raw_value = name.lower().encode(), "\0".join(values).encode()
        parts += [WORD.pack(len(raw_name)), raw_name, WORD.pack(len(raw_value)), raw_value]
    return b"".join(parts)


def decode_header_block(block: bytes) -> Headers:
    """The inverse of `encode_header_block`; SpdyError when the block is torn or repeats a name."""
    try:
        (count,), at = WORD.unpack_from(block, 0), WORD.size
        headers: Headers = {}
        for _ in range(count):
            name, at = _string(block, at)
            value, at = _string(block, at)
            if not name or name in headers:
                raise SpdyError(f"a header block with an empty or repeated name {name!r}")
            headers[name] = value.split("\0")
    except (struct.error, UnicodeDecodeError) as exc:
        raise SpdyError(f"a malformed header block: {exc}") from None
    if at != len(block):
        raise SpdyError("a header block with bytes after its last header")
    return headers


def _string(block: bytes, at: int) -> tuple[str, int]:
    """The length-prefixed string at `at` and the offset after it."""
    (size,) = WORD.unpack_from(block, at)
    if at + 4 + size > len(block):
        raise SpdyError("a header block ends inside a name or value")
    return block[at + 4:at + 4 + size].decode(), at + 4 + size


def _control(kind: int, flags: int, payload: bytes) -> bytes:
    if len(payload) > MAX_LENGTH:
        raise ValueError(f"a control frame of {len(payload)} bytes")
    return TWO_WORDS.pack(0x80000000 | VERSION << 16 | kind, flags << 24 | len(payload)) + payload


def data_frame(stream_id: int, data: bytes = b"", *, fin: bool = False) -> bytes:
    """A data frame (§2.2.2); needs no compression context."""
    if len(data) > MAX_LENGTH:
        raise ValueError(f"a data frame of {len(data)} bytes")
    return TWO_WORDS.pack(stream_id & 0x7FFFFFFF, (FLAG_FIN if fin else 0) << 24 | len(data)) + data


class FrameWriter:
    """Encodes frames for one direction of a connection (it owns that direction's compressor)."""

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8,
                                            zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def _compress(self, headers: Headers) -> bytes:
        return self._compressor.compress(encode_header_block(headers)) + self._compressor.flush(zlib.Z_SYNC_FLUSH)

    def encode(self, frame: Frame) -> bytes:
        if isinstance(frame, Data):
            return data_frame(frame.stream_id, frame.data, fin=frame.fin)
        if isinstance(frame, SynStream):
            head = TWO_WORDS.pack(frame.stream_id & 0x7FFFFFFF, frame.associated_to & 0x7FFFFFFF)
            return _control(SYN_STREAM, frame.flags, head + bytes(((frame.priority & 7) << 5, frame.slot))
                            + self._compress(frame.headers))
        if isinstance(frame, SynReply):
            return _control(SYN_REPLY, frame.flags, WORD.pack(frame.stream_id) + self._compress(frame.headers))
        if isinstance(frame, HeadersFrame):
            return _control(HEADERS, frame.flags, WORD.pack(frame.stream_id) + self._compress(frame.headers))
        if isinstance(frame, RstStream):
            return _control(RST_STREAM, 0, TWO_WORDS.pack(frame.stream_id, frame.status))
        if isinstance(frame, Settings):
            body = WORD.pack(len(frame.entries)) + b"".join(
                TWO_WORDS.pack(flags << 24 | ident, value) for flags, ident, value in frame.entries)
            return _control(SETTINGS, frame.flags, body)
        if isinstance(frame, Ping):
            return _control(PING, 0, WORD.pack(frame.ping_id))
        if isinstance(frame, GoAway):
            return _control(GOAWAY, 0, TWO_WORDS.pack(frame.last_good_stream_id, frame.status))
        if isinstance(frame, WindowUpdate):
            return _control(WINDOW_UPDATE, 0, TWO_WORDS.pack(frame.stream_id, frame.delta & 0x7FFFFFFF))
        raise TypeError(f"not a SPDY frame: {frame!r}")


class FrameParser:
    """Decodes the frames of one direction of a connection from bytes cut anywhere."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflater = zlib.decompressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            first, second = TWO_WORDS.unpack_from(self._buffer, 0)
            length = second & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            frame = self._decode(first, second >> 24, payload)
            if frame is not None:
                frames.append(frame)
        return frames

    def _inflate(self, block: bytes) -> Headers:
        try:
            raw = self._inflater.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as exc:
            raise SpdyError(f"a header block that does not inflate: {exc}") from None
        if self._inflater.unconsumed_tail:
            raise SpdyError(f"a header block over {MAX_HEADER_BLOCK} bytes")
        return decode_header_block(raw)

    def _decode(self, first: int, flags: int, payload: bytes) -> Frame | None:
        if not first & 0x80000000:
            stream_id = first & 0x7FFFFFFF
            if stream_id == 0:
                raise SpdyError("a data frame on stream 0")
            return Data(stream_id, payload, flags)
        version, kind = first >> 16 & 0x7FFF, first & 0xFFFF
        if version != VERSION:
            raise SpdyError(f"SPDY version {version} (this server speaks {VERSION})")
        if kind in (SYN_STREAM, SYN_REPLY, HEADERS):
            minimum = 10 if kind == SYN_STREAM else 4
            if len(payload) < minimum:
                raise SpdyError(f"a control frame of type {kind} with {len(payload)} bytes")
            stream_id = WORD.unpack_from(payload, 0)[0] & 0x7FFFFFFF
            if stream_id == 0:
                raise SpdyError(f"a control frame of type {kind} on stream 0")
            headers = self._inflate(payload[minimum:])
            if kind == SYN_STREAM:
                associated = WORD.unpack_from(payload, 4)[0] & 0x7FFFFFFF
                return SynStream(stream_id, headers, flags, associated, payload[8] >> 5, payload[9])
            return (SynReply if kind == SYN_REPLY else HeadersFrame)(stream_id, headers, flags)
        fixed = {RST_STREAM: 8, PING: 4, GOAWAY: 8, WINDOW_UPDATE: 8}
        if kind in fixed and len(payload) != fixed[kind]:
            raise SpdyError(f"a control frame of type {kind} with {len(payload)} bytes")
        if kind == RST_STREAM:
            stream_id, status = TWO_WORDS.unpack(payload)
            return RstStream(stream_id & 0x7FFFFFFF, status)
        if kind == PING:
            return Ping(WORD.unpack(payload)[0])
        if kind == GOAWAY:
            last, status = TWO_WORDS.unpack(payload)
            return GoAway(last & 0x7FFFFFFF, status)
        if kind == WINDOW_UPDATE:
            stream_id, delta = TWO_WORDS.unpack(payload)
            return WindowUpdate(stream_id & 0x7FFFFFFF, delta & 0x7FFFFFFF)
        if kind == SETTINGS:
            if len(payload) < 4 or len(payload) != 4 + 8 * WORD.unpack_from(payload, 0)[0]:
                raise SpdyError(f"a SETTINGS frame of {len(payload)} bytes")
            entries = tuple((a >> 24, a & 0xFFFFFF, b) for a, b in
                            (TWO_WORDS.unpack_from(payload, 4 + 8 * i) for i in range(WORD.unpack_from(payload, 0)[0])))
            return Settings(entries, flags)
        return None  # an unknown control frame type: ignored (§2.2.1)
