"""Decoding API responses into models: eager (`wire.JsonDecoder`) or lazy
(`lazy_decoder.LazyDecoder`, building `lazy` models that validate on first access).
"""

from __future__ import annotations

from kubeinformers.runtime.codec.gc_pause import (
    gc_paused as gc_paused,
)
from kubeinformers.runtime.codec.lazy import (
    InvalidObjectError as InvalidObjectError,
)
from kubeinformers.runtime.codec.lazy import (
    LazyModelBuilder as LazyModelBuilder,
)
from kubeinformers.runtime.codec.lazy import (
    is_lazy as is_lazy,
)
from kubeinformers.runtime.codec.lazy import (
    materialize as materialize,
)
from kubeinformers.runtime.codec.lazy_decoder import (
    LazyDecoder as LazyDecoder,
)
from kubeinformers.runtime.codec.wire import (
    EventWire as EventWire,
)
from kubeinformers.runtime.codec.wire import (
    JsonDecoder as JsonDecoder,
)
from kubeinformers.runtime.codec.wire import (
    ListWire as ListWire,
)
from kubeinformers.runtime.codec.wire import (
    ObjectDecodeError as ObjectDecodeError,
)

__all__ = [
    "EventWire",
    "InvalidObjectError",
    "JsonDecoder",
    "LazyDecoder",
    "LazyModelBuilder",
    "ListWire",
    "ObjectDecodeError",
    "gc_paused",
    "is_lazy",
    "materialize",
]
