"""How a watch stream splits into events: JSON lines, or length-prefixed protobuf frames.

kube-apiserver writes a JSON watch as one event per line and a protobuf watch
(`application/vnd.kubernetes.protobuf;stream=watch`) as frames, each a 4-byte big-endian
length and then that many bytes (a `WatchEvent` message). Both splitters take the response's
chunks as they arrive and yield whole units; a unit cut short by the end of the stream is
reported, never decoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["TruncatedFrameError", "split_frames", "split_lines"]

_LENGTH = 4
# A frame larger than this is a corrupt length, not an object (etcd's own limit is 1.5 MiB per
# object; the server's watch frames stay far below this).
MAX_FRAME = 256 * 1024 * 1024


class TruncatedFrameError(ValueError):
    """The stream ended (or lied about a length) in the middle of a frame."""


def split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The non-blank lines of a JSON watch; a last line without its newline is yielded too."""
    pending = b""
    for chunk in chunks:
        if pending:
            chunk = pending + chunk
        lines = chunk.split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line and not line.isspace():
                yield line
    if pending.strip():
        yield pending


def split_frames(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The frames of a protobuf watch, without their length prefixes.

    Raises TruncatedFrameError when the stream ends inside a frame or announces an impossible
    length (the watch must then be restarted, not a frame skipped).
    """
    buf = b""
    for chunk in chunks:
        buf = buf + chunk if buf else chunk
        size = len(buf)
        pos = 0
        while size - pos >= _LENGTH:
            length = int.from_bytes(buf[pos : pos + _LENGTH], "big")
            if length > MAX_FRAME:
                raise TruncatedFrameError(
                    f"a watch frame announces {length} bytes (over {MAX_FRAME}): the stream is corrupt"
                )
            end = pos + _LENGTH + length
            if end > size:
                break
            yield buf[pos + _LENGTH : end]
            pos = end
        buf = buf[pos:] if pos else buf
    if buf:
        raise TruncatedFrameError(f"the watch stream ended inside a frame ({len(buf)} bytes left)")
