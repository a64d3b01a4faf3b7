"""meta/v1 Status from protobuf: the body of a failed request and a watch ERROR event's object.

Why its own table: the runtime decodes Status itself (runtime.api.model.Status) for every
resource, built-in or not, and must not depend on the generated schema table; these few
apimachinery messages have been stable since v1.
"""

from __future__ import annotations

from kubeinformers.runtime.api.model import Status
from kubeinformers.runtime.codec.protobuf.envelope import unwrap
from kubeinformers.runtime.codec.protobuf.reader import ProtobufDecodeError
from kubeinformers.runtime.codec.protobuf.schema import (
    INT,
    MESSAGE,
    OMITEMPTY,
    POINTER,
    REPEATED,
    STRING,
    Messages,
)
from kubeinformers.runtime.codec.protobuf.transcode import Transcoder

__all__ = ["STATUS_MESSAGES", "decode_status"]

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
STATUS_MESSAGES: Messages = {
    _META + "Status": (
        (1, "metadata", MESSAGE, _META + "ListMeta", OMITEMPTY),
        (2, "status", STRING, None, OMITEMPTY),
        (3, "message", STRING, None, OMITEMPTY),
        (4, "reason", STRING, None, OMITEMPTY),
        (5, "details", MESSAGE, _META + "StatusDetails", POINTER | OMITEMPTY),
        (6, "code", INT, None, OMITEMPTY),
    ),
    _META + "ListMeta": (
        (1, "selfLink", STRING, None, OMITEMPTY),
        (2, "resourceVersion", STRING, None, OMITEMPTY),
        (3, "continue", STRING, None, OMITEMPTY),
        (4, "remainingItemCount", INT, None, POINTER | OMITEMPTY),
    ),
    _META + "StatusDetails": (
        (1, "name", STRING, None, OMITEMPTY),
        (2, "group", STRING, None, OMITEMPTY),
        (3, "kind", STRING, None, OMITEMPTY),
        (4, "causes", MESSAGE, _META + "StatusCause", REPEATED | OMITEMPTY),
        (5, "retryAfterSeconds", INT, None, OMITEMPTY),
        (6, "uid", STRING, None, OMITEMPTY),
    ),
    _META + "StatusCause": (
        (1, "reason", STRING, None, OMITEMPTY),
        (2, "message", STRING, None, OMITEMPTY),
        (3, "field", STRING, None, OMITEMPTY),
    ),
}
_transcoder = Transcoder(STATUS_MESSAGES)


def decode_status(data: bytes, what: str = "") -> Status:
    """The Status in a magic-prefixed runtime.Unknown body (an error response to a protobuf
    Accept, or a watch ERROR event's object). ValueError when it is not a Status."""
    for_what = f" for {what}" if what else ""
    try:
        api_version, kind, raw = unwrap(data)
        if kind != "Status":
            raise ProtobufDecodeError(f"expected a Status, got kind {kind!r}")
        fields = _transcoder.to_json_object(_META + "Status", raw)
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(f"cannot decode a protobuf Status{for_what}: {exc}") from None
    return Status.model_validate({"kind": kind, "apiVersion": api_version or "v1", **fields})
