"""The compact store: lazy objects keep their raw bytes compressed with a per-kind dictionary.

Why: a cached object's raw bytes (1.5-3.5 KB for a pod) are most of what a lazy cache costs,
and objects of one kind repeat the same field names, images, label keys and managed-fields
shapes: deflate with a preset dictionary taken from the kind's first objects shrinks a pod
to ~250 bytes, and inflating it back costs ~5 µs, far below the model build that follows.

Opt-in (`SharedInformerFactory(..., cache_compression="zlib")`): every first access of a
non-identity field then pays the inflate, and the sync pays ~25 µs per object to deflate.

The dictionary is the raw bytes of the first `TRAIN_OBJECTS` objects the informer decodes
(at most zlib's 32 KB window, the newest kept): a list page trains it from its own first
items before any of them is stored, so every listed object is compressed; objects that arrive
before it exists (the first events of a watch-list) keep their bytes uncompressed, as without
the option. It is trained once per informer (per decoder) and never changes, so every object
compressed with it stays readable.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable
from typing import Literal

__all__ = ["CACHE_COMPRESSIONS", "CacheCompression", "Compactor", "new_compactor"]

CacheCompression = Literal["none", "zlib"]
CACHE_COMPRESSIONS: tuple[CacheCompression, ...] = ("none", "zlib")

# Raw deflate (no zlib header or checksum: 6 bytes less per object; the bytes never leave
# this process and inflate checks their structure).
_WBITS = -15
_WINDOW = 32768  # deflate's window: a longer dictionary is truncated to its last 32 KB


class Compactor:
    """Compresses one informer's raw object bytes with a dictionary trained once.

    `pack` returns the compressed bytes, or None while the dictionary is still being trained
    (the caller keeps those bytes as they are). `unpack` restores exactly the bytes packed.
    Thread-safe: training is guarded by a lock; compressing copies a primed compressor.
    """

    TRAIN_OBJECTS = 16
    """Objects whose raw bytes make the dictionary (16 pods are ~50 KB, above the window)."""

    def __init__(self, level: int = 6) -> None:
        self.level = level
        self._lock = threading.Lock()
        self._sample: list[bytes] = []
        self._dictionary: bytes | None = None
        self._primed: zlib._Compress | None = None  # a compressor that has read the dictionary
        self.trained_times = 0  # how often a dictionary was made (once; tests check it)

    @property
    def dictionary(self) -> bytes | None:
        """The preset dictionary, or None until it is trained."""
        return self._dictionary

    def train(self, raws: Iterable[bytes]) -> None:
        """Take the sample from `raws` (a list page's items) before they are packed; a no-op
        once trained."""
        if self._dictionary is not None:
            return
        with self._lock:
            for raw in raws:
                if self._dictionary is not None or not self._add(raw):
                    break

    def pack(self, raw: bytes) -> bytes | None:
        """`raw` compressed with the dictionary, or None (keep `raw`) until it exists."""
        primed = self._primed
        if primed is None:
            with self._lock:
                primed = self._primed
                if primed is None:
                    self._add(raw)
                    return None
        compressor = primed.copy()
        return compressor.compress(raw) + compressor.flush()

    def unpack(self, packed: bytes) -> bytes:
        """The bytes `pack` compressed (zlib.error if `packed` is not such bytes)."""
        assert self._dictionary is not None, "unpack before the dictionary was trained"
        inflater = zlib.decompressobj(_WBITS, zdict=self._dictionary)
        raw = inflater.decompress(packed)
        if not inflater.eof:
            raise zlib.error("compressed object bytes end before their end marker")
        return raw

    def _add(self, raw: bytes) -> bool:
        """Add one object to the sample (under the lock); train when it is complete. False
        once trained."""
        if self._dictionary is not None:
            return False
        self._sample.append(bytes(raw))
        if len(self._sample) >= self.TRAIN_OBJECTS:
            self._finish()
            return False
        return True

    def _finish(self) -> None:
        dictionary = b"".join(self._sample)[-_WINDOW:]
        primed = zlib.compressobj(
            self.level, zlib.DEFLATED, _WBITS, 8, zlib.Z_DEFAULT_STRATEGY, dictionary
        )
        self._dictionary = dictionary
        self._primed = primed
        self._sample = []
        self.trained_times += 1


def new_compactor(compression: CacheCompression) -> Compactor | None:
    """The compactor for a `cache_compression` option value (None for "none")."""
    if compression == "none":
        return None
    if compression == "zlib":
        return Compactor()
    raise ValueError(f'cache_compression must be "none" or "zlib", not {compression!r}')
