"""HTTP/1.1 chunked transfer decoding in big reads, for long streams of small chunks.

Why: kube-apiserver flushes every watch event, so a watch-list of 10,000 pods arrives as
20,000-30,000 HTTP chunks (each event is a 4-byte length write and the message write). urllib3's
`read_chunked` reads each chunk with two calls into http.client (a size line, the data and its
CRLF), several microseconds of Python per chunk: a fifth of a watch-list sync's client time.
Here one `read1` takes whatever the socket holds (up to `read_size` bytes, dozens of chunks),
the chunks in it are cut out with `bytes.find`, and their data leaves as one piece per read, so
nothing already received waits for more to arrive.

This reads the response's socket file (`resp._fp.fp`) exactly as urllib3's own `read_chunked`
does, and ends the same way (trailers consumed, the http.client response closed), so a
connection that reached the end of its response is reused as after urllib3's reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import urllib3
from urllib3.exceptions import ProtocolError

__all__ = ["dechunk", "raw_chunked_body"]

_MAX_LINE = 1024  # urllib3's limit for a chunk-size line (_MAX_CHUNK_LINE_LENGTH)


def raw_chunked_body(resp: urllib3.BaseHTTPResponse, read_size: int) -> Iterator[bytes] | None:
    """The body of a chunked, uncompressed, not yet read urllib3 response, de-chunked in reads
    of up to `read_size` bytes; None for any other response (read it with urllib3)."""
    fp: Any = getattr(resp, "_fp", None)
    sock_file = getattr(fp, "fp", None)
    if (
        not resp.chunked
        or sock_file is None
        or not callable(getattr(sock_file, "read1", None))
        or getattr(resp, "chunk_left", None) is not None
        or resp.headers.get("Content-Encoding", "identity").lower() != "identity"
    ):
        return None
    original = getattr(resp, "_original_response", None)
    return _read_to_end(sock_file.read1, read_size, original)


def _read_to_end(read: Callable[[int], bytes], read_size: int, original: Any) -> Iterator[bytes]:
    yield from dechunk(read, read_size)
    # As urllib3's read_chunked: the whole response is read; close the http.client response
    # so that the connection goes back to the pool ready for the next request.
    if original is not None:
        original.close()


def dechunk(read: Callable[[int], bytes], read_size: int) -> Iterator[bytes]:
    """The data of a chunked body read with `read(read_size)` (which returns b"" at the end):
    one piece per read holding every chunk's data that read completed or began. Raises
    urllib3's ProtocolError for a malformed chunk or a body that ends before its last chunk."""
    buf = b""
    pos = 0
    remaining = 0  # data bytes of the current chunk not yet taken
    crlf = False  # the current chunk's data is taken, its CRLF is not
    while True:
        out: list[bytes] = []
        end = len(buf)
        while True:
            if remaining:
                take = end - pos
                if take <= 0:
                    break
                if take > remaining:
                    take = remaining
                out.append(buf[pos : pos + take])
                pos += take
                remaining -= take
                if remaining:
                    break
                crlf = True
            if crlf:
                if end - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise ProtocolError(
                        f"malformed chunked response: {buf[pos : pos + 2]!r} after a chunk's data"
                    )
                pos += 2
                crlf = False
            nl = buf.find(b"\r\n", pos)
            if nl < 0:
                if end - pos > _MAX_LINE:
                    raise ProtocolError("malformed chunked response: a chunk-size line too long")
                break
            size_line = buf[pos:nl].split(b";", 1)[0]
            try:
                size = int(size_line, 16)
            except ValueError:
                raise ProtocolError(
                    f"malformed chunked response: invalid chunk size {size_line[:40]!r}"
                ) from None
            if size < 0:
                raise ProtocolError(f"malformed chunked response: chunk size {size}")
            pos = nl + 2
            if size == 0:
                if out:
                    yield out[0] if len(out) == 1 else b"".join(out)
                _skip_trailers(read, read_size, buf[pos:])
                return
            remaining = size
        if out:
            yield out[0] if len(out) == 1 else b"".join(out)
        more = read(read_size)
        if not more:
            raise ProtocolError("the response ended before its last chunk")
        buf = buf[pos:] + more if pos < len(buf) else more
        pos = 0


def _skip_trailers(read: Callable[[int], bytes], read_size: int, rest: bytes) -> None:
    """Consume the trailer section after the last chunk, up to its empty line (servers
    that end without it are tolerated, as urllib3 does)."""
    while True:
        nl = rest.find(b"\r\n")
        if nl == 0:
            return
        if nl > 0:
            rest = rest[nl + 2 :]
            continue
        if len(rest) > _MAX_LINE:
            raise ProtocolError("malformed chunked response: a trailer line too long")
        more = read(read_size)
        if not more:
            return
        rest += more
