"""K2: a watch stream splits into JSON lines or length-prefixed protobuf frames, whatever the
chunking; a frame cut short by the end of the stream is reported, never decoded."""

from __future__ import annotations

import pytest

from kubeinformers.runtime.client.framing import TruncatedFrameError, split_frames, split_lines


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def rechunk(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


PAYLOADS = [b"first", b"", b"x" * 70_000, b"\n\n\x00k8s", b"last"]
STREAM = b"".join(frame(p) for p in PAYLOADS)


@pytest.mark.parametrize("size", [1, 3, 4, 5, 4096, len(STREAM)])
def test_k2_frames_come_out_whole_whatever_the_chunk_boundaries(size: int) -> None:
    assert list(split_frames(rechunk(STREAM, size))) == PAYLOADS


def test_k2_a_stream_ending_inside_a_frame_raises_after_the_whole_frames() -> None:
    seen: list[bytes] = []
    with pytest.raises(TruncatedFrameError, match="ended inside a frame"):
        for payload in split_frames([STREAM + frame(b"cut short")[:-3]]):
            seen.append(payload)
    assert seen == PAYLOADS


def test_k2_a_stream_ending_inside_a_length_prefix_raises() -> None:
    with pytest.raises(TruncatedFrameError):
        list(split_frames([frame(b"ok") + b"\x00\x00"]))


def test_k2_an_impossible_length_is_a_corrupt_stream_not_a_huge_allocation() -> None:
    with pytest.raises(TruncatedFrameError, match="corrupt"):
        list(split_frames([b"\xff\xff\xff\xff" + b"x" * 10]))


@pytest.mark.parametrize("size", [1, 2, 7, 1000])
def test_k2_lines_come_out_whole_and_blank_lines_are_skipped(size: int) -> None:
    data = b'{"a":1}\n\n  \n{"b":2}\n{"c":3}'
    assert list(split_lines(rechunk(data, size))) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
