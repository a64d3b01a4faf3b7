"""Kubernetes protobuf for the runtime, in pure Python: wire reading (`reader`), the k8s
envelope, lists and watch frames (`envelope`), identity (`identity`), protobuf → Go-JSON dicts
(`transcode`), lazy objects from protobuf (`lazy`) and the transport's decoder (`decoder`),
all driven by a schema table (`schema`; the built-ins' is generated)."""

from __future__ import annotations

from kubeinformers.runtime.codec.protobuf.decoder import (
    ProtobufLazyDecoder as ProtobufLazyDecoder,
)
from kubeinformers.runtime.codec.protobuf.reader import (
    ProtobufDecodeError as ProtobufDecodeError,
)
from kubeinformers.runtime.codec.protobuf.transcode import (
    to_json_object as to_json_object,
)

__all__ = ["ProtobufDecodeError", "ProtobufLazyDecoder", "to_json_object"]
