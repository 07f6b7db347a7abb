"""SPDY/3.1 framing against bytes built by hand from the spec (draft 3, §2.2-2.6), and round trips
through one writer/parser pair (one compression context per direction)."""

from __future__ import annotations

import struct
import zlib

import pytest

from control.api import spdy


def control_head(kind: int, flags: int, length: int) -> bytes:
    """§2.2.1: C=1, version 15 bits, type 16 bits | flags 8 bits, length 24 bits."""
    return struct.pack(">HHI", 0x8000 | 3, kind, flags << 24 | length)


def block(*pairs: tuple[str, str]) -> bytes:
    """An uncompressed name/value block (§2.6.10)."""
    out = struct.pack(">I", len(pairs))
    for name, value in pairs:
        out += struct.pack(">I", len(name)) + name.encode() + struct.pack(">I", len(value)) + value.encode()
    return out


def deflate(*blocks: bytes) -> list[bytes]:
    """Each block compressed in one stream-wide context with the SPDY/3 dictionary, sync-flushed."""
    z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, spdy.DICTIONARY)
    return [z.compress(b) + z.flush(zlib.Z_SYNC_FLUSH) for b in blocks]


def test_the_dictionary_is_the_spdy3_one():
    # 1423 bytes; zlib names it by its Adler-32 in every stream header (what Go's reader checks)
    assert len(spdy.DICTIONARY) == 1423 and zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


def test_kubectls_two_syn_streams_parse_from_hand_built_bytes():
    first, second = deflate(block(("port", "80"), ("requestid", "0"), ("streamtype", "error")),
                            block(("port", "80"), ("requestid", "0"), ("streamtype", "data")))
    wire = (control_head(1, 0, 10 + len(first)) + struct.pack(">IIBB", 1, 0, 0, 0) + first
            + control_head(1, 0, 10 + len(second)) + struct.pack(">IIBB", 3, 0, 0xE0, 0) + second)
    frames = spdy.FrameParser().feed(wire)
    assert frames == [spdy.SynStream(1, {"port": ["80"], "requestid": ["0"], "streamtype": ["error"]}),
                      spdy.SynStream(3, {"port": ["80"], "requestid": ["0"], "streamtype": ["data"]}, priority=7)]
    assert spdy.header(frames[1].headers, "StreamType") == "data" and spdy.header(frames[1].headers, "x") == ""


def test_bytes_cut_anywhere_give_the_same_frames():
    (compressed,) = deflate(block(("port", "8080"), ("streamtype", "data")))
    wire = (control_head(1, 0, 10 + len(compressed)) + struct.pack(">IIBB", 5, 0, 0, 0) + compressed
            + struct.pack(">II", 5, 3) + b"GET" + struct.pack(">II", 5, 1 << 24)  # data, then an empty FIN
            + control_head(6, 0, 4) + struct.pack(">I", 1))
    parser, frames = spdy.FrameParser(), []
    for i in range(len(wire)):  # one byte at a time, as Go's framer may write fields one by one
        frames += parser.feed(wire[i:i + 1])
    assert frames == [spdy.SynStream(5, {"port": ["8080"], "streamtype": ["data"]}), spdy.Data(5, b"GET"),
                      spdy.Data(5, b"", spdy.FLAG_FIN), spdy.Ping(1)]
    assert frames[2].fin and not frames[1].fin


def test_written_frames_are_the_specs_bytes():
    w = spdy.FrameWriter()
    assert w.encode(spdy.Data(3, b"hi", spdy.FLAG_FIN)) == struct.pack(">II", 3, 1 << 24 | 2) + b"hi"
    assert w.encode(spdy.RstStream(3, spdy.CANCEL)) == control_head(3, 0, 8) + struct.pack(">II", 3, 5)
    assert w.encode(spdy.Ping(7)) == control_head(6, 0, 4) + struct.pack(">I", 7)
    assert w.encode(spdy.GoAway(9, spdy.GOAWAY_PROTOCOL_ERROR)) == control_head(7, 0, 8) + struct.pack(">II", 9, 1)
    assert w.encode(spdy.WindowUpdate(1, 4096)) == control_head(9, 0, 8) + struct.pack(">II", 1, 4096)
    assert w.encode(spdy.Settings(((1, 7, 65536),))) == control_head(4, 0, 12) + struct.pack(">III", 1, 0x01000007, 65536)
    reply = w.encode(spdy.SynReply(1))
    assert reply[:8] == control_head(2, 0, len(reply) - 8) and reply[8:12] == struct.pack(">I", 1)
    # the header block inflates with the dictionary to an empty block (what Go's reader expects)
    assert zlib.decompressobj(zdict=spdy.DICTIONARY).decompress(reply[12:]) == struct.pack(">I", 0)


def test_round_trips_share_one_compression_context_per_direction():
    w, p = spdy.FrameWriter(), spdy.FrameParser()
    frames = [spdy.SynStream(1, {"port": ["80"], "streamtype": ["error"]}, flags=spdy.FLAG_FIN),
              spdy.SynReply(1, {"x-multi": ["a", "b"]}), spdy.HeadersFrame(1, {"more": ["1"]}),
              spdy.Data(1, b"\x00" * 70000), spdy.Settings(((0, 4, 100), (1, 7, 65536))),
              spdy.Ping(2), spdy.GoAway(1), spdy.RstStream(1, 2), spdy.WindowUpdate(3, 10)]
    wire = b"".join(w.encode(f) for f in frames)
    assert p.feed(wire) == frames
    # a second writer's blocks do not inflate in the first parser's context (it is stream-wide)
    with pytest.raises(spdy.SpdyError):
        p.feed(spdy.FrameWriter().encode(spdy.SynReply(3, {"a": ["b"]})))


def test_go_style_header_blocks_with_lowercase_names_and_nul_separated_values():
    assert spdy.encode_header_block({"Port": ["80"], "v": ["a", "b"]}) == block(("port", "80"), ("v", "a\0b"))
    assert spdy.decode_header_block(block(("v", "a\0b"))) == {"v": ["a", "b"]}


@pytest.mark.parametrize("wire, why", [
    (struct.pack(">HHI", 0x8000 | 2, 1, 0), "another version"),
    (struct.pack(">II", 0, 0), "data on stream 0"),
    (control_head(6, 0, 5) + b"\x00" * 5, "a PING of 5 bytes"),
    (control_head(3, 0, 4) + b"\x00" * 4, "a RST_STREAM of 4 bytes"),
    (control_head(1, 0, 12) + struct.pack(">IIBB", 1, 0, 0, 0) + b"xx", "a header block that does not inflate"),
    (control_head(2, 0, 2) + b"\x00\x01", "a SYN_REPLY without its stream id"),
    (control_head(4, 0, 4) + struct.pack(">I", 3), "SETTINGS whose count disagrees with its length"),
])
def test_what_is_not_spdy3_raises(wire, why):
    with pytest.raises(spdy.SpdyError):
        spdy.FrameParser().feed(wire)


def test_torn_or_repeated_header_blocks_raise():
    with pytest.raises(spdy.SpdyError):
        spdy.decode_header_block(struct.pack(">II", 1, 10) + b"abc")
    with pytest.raises(spdy.SpdyError):
        spdy.decode_header_block(block(("a", "1"), ("a", "2")))
    with pytest.raises(spdy.SpdyError):
        spdy.decode_header_block(block(("a", "1")) + b"!")


def test_a_header_bomb_is_refused():
    (bomb,) = deflate(block(("a", "x" * (spdy.MAX_HEADER_BLOCK + 10))))
    with pytest.raises(spdy.SpdyError):
        spdy.FrameParser().feed(control_head(2, 0, 4 + len(bomb)) + struct.pack(">I", 1) + bomb)


def test_unknown_control_frames_are_skipped_and_partial_frames_wait():
    parser = spdy.FrameParser()
    assert parser.feed(control_head(10, 0, 3) + b"abc" + struct.pack(">II", 1, 4) + b"ab") == []
    assert parser.feed(b"cd") == [spdy.Data(1, b"abcd")]
