"""HTTP chunked transfer decoding in big reads (client/chunked.py): the body is exactly what
urllib3 would give, every byte received leaves before the next read, and a malformed or cut
body is a ProtocolError, never a silently shorter body."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from urllib3.exceptions import ProtocolError

from kubeinformers.runtime.client.chunked import dechunk


def chunked(*pieces: bytes, trailer: bytes = b"", ext: bool = False) -> bytes:
    out = b""
    for p in pieces:
        out += f"{len(p):x}".encode() + (b";name=value" if ext else b"") + b"\r\n" + p + b"\r\n"
    return out + b"0\r\n" + trailer + b"\r\n"


def reader(data: bytes, sizes: list[int]) -> Callable[[int], bytes]:
    """A socket file's read1: the next of `sizes` bytes per call (at most what is asked)."""
    pos = 0
    it = iter(sizes)

    def read(n: int) -> bytes:
        nonlocal pos
        size = min(next(it, n), n)
        piece = data[pos : pos + size]
        pos += len(piece)
        return piece

    return read


PIECES = [bytes([65 + i % 26]) * (1 + (i * 37) % 300) for i in range(60)]


@pytest.mark.parametrize("read_size", [1, 2, 5, 64, 4096, 65536])
@pytest.mark.parametrize(
    "body",
    [chunked(*PIECES), chunked(*PIECES, ext=True), chunked(*PIECES, trailer=b"X-Check: 1\r\n")],
    ids=["plain", "extensions", "trailer"],
)
def test_the_body_is_the_chunks_data_whatever_the_reads(body: bytes, read_size: int) -> None:
    assert b"".join(dechunk(reader(body, []), read_size)) == b"".join(PIECES)


def test_uneven_reads_give_the_same_body() -> None:
    body = chunked(*PIECES)
    rng = random.Random(7)
    for _ in range(20):
        sizes = [rng.randint(1, 700) for _ in range(len(body))]
        assert b"".join(dechunk(reader(body, sizes), 65536)) == b"".join(PIECES)


def test_every_byte_received_leaves_before_the_next_read() -> None:
    # A watch event must not wait for the next one: what one read brought is yielded whole,
    # including the begun part of a chunk whose rest has not arrived.
    body = chunked(b"a" * 10, b"b" * 10, b"c" * 50)
    first_read = body.index(b"c" * 20) + 20  # ends inside the third chunk's data
    reads = 0
    inner = reader(body, [first_read])

    def read(n: int) -> bytes:
        nonlocal reads
        reads += 1
        return inner(n)

    pieces = dechunk(read, 65536)
    assert next(pieces) == b"a" * 10 + b"b" * 10 + b"c" * 20
    assert reads == 1
    assert b"".join(pieces) == b"c" * 30


def test_the_last_chunk_ends_the_body_without_reading_further() -> None:
    body = chunked(b"x" * 5)
    read = reader(body + b"NEXT RESPONSE", [len(body)])
    assert list(dechunk(read, 65536)) == [b"x" * 5]
    assert read(100) == b"NEXT RESPONSE"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"5\r\nabc", "ended before its last chunk"),
        (b"5\r\nabcde", "ended before its last chunk"),
        (b"zz\r\nabc\r\n", "invalid chunk size b'zz'"),
        (b"3\r\nabcXY0\r\n\r\n", r"b'XY' after a chunk's data"),
        (b"", "ended before its last chunk"),
        (b"f" * 2000, "chunk-size line too long"),
    ],
)
def test_a_malformed_or_cut_body_is_a_protocol_error(body: bytes, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        b"".join(dechunk(reader(body, []), 7))
