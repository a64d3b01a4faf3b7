"""Which wire format `decode="eager"` should ask for: `python -m bench.eager_wire`.

Why: the lazy default reads built-in kinds as protobuf because the server writes it ~2-3x
faster than JSON and a lazy object only reads its identity. An eager informer validates every
object up front; from protobuf that means transcoding each item to the dict Go's JSON would
have been, then `model_validate`, against `model_validate_json` of the JSON item. Whether the
server's saving pays for the client's transcoding is measured here, on the real server:

- server: a whole LIST of the pods in each format (request to last byte, client idle);
- client: a fresh process decodes that body into validated Pods exactly as an eager decoder
  would (JSON: `JsonDecoder.decode_list`; protobuf: split the list, transcode and validate
  each item), collector paused as in a sync; wall, CPU and minor page faults.

In a watch-list the server's encoding and the client's decoding overlap on two cores, so a
sync takes about the larger of the two: the format to ask for is the one with the smaller
maximum. An existing server holding the pods can be given with --kubeconfig.

The last line is the floor of any eager decoder written in Python: the JSON child builds the
same validated Pods again, model by model, with no parsing and no checks at all (`__new__`
and the instance's dicts set directly, what `model_construct` does without its defaults), and
compares that with pydantic validating the JSON. A decoder that built models in Python (from
protobuf, say) cannot cost less than that copy.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

from bench.servers import NAMESPACE, RealBenchServer

_PROTOBUF = "application/vnd.kubernetes.protobuf"
_POD = "k8s.io.api.core.v1.Pod"


def _fetch(kubeconfig: str, accept: str) -> tuple[bytes, float]:
    from kubernetes import config

    from kubeinformers.runtime.client.auth import apply_auth

    api = config.new_client_from_config(config_file=kubeconfig)
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    headers = {"Accept": accept}
    apply_auth(api, headers, [], path)
    start = time.perf_counter()
    resp = api.rest_client.pool_manager.request(
        "GET", api.configuration.host + path, headers=headers, preload_content=True
    )
    data: bytes = resp.data
    return data, time.perf_counter() - start


def child(fmt: str, kubeconfig: str) -> dict[str, Any]:
    """One format in this (fresh) process: the server's time, then the client's decode."""
    import gc

    from kubeinformers.generated.core.v1.models import Pod
    from kubeinformers.generated.protobuf_schema import MESSAGES
    from kubeinformers.runtime.codec.gc_pause import gc_paused
    from kubeinformers.runtime.codec.protobuf.envelope import split_list, unwrap
    from kubeinformers.runtime.codec.protobuf.transcode import Transcoder
    from kubeinformers.runtime.codec.wire import JsonDecoder

    body, server_seconds = _fetch(
        kubeconfig, _PROTOBUF if fmt == "protobuf" else "application/json"
    )
    json_decoder = JsonDecoder(Pod)
    to_json_object = Transcoder(MESSAGES).to_json_object

    def decode_protobuf(data: bytes) -> list[Pod]:
        _api_version, _kind, raw = unwrap(data)
        items = split_list(raw)[3]
        validate = Pod.model_validate
        return [validate(to_json_object(_POD, bytes(item))) for item in items]

    def decode(data: bytes) -> list[Pod]:
        if fmt == "protobuf":
            return decode_protobuf(data)
        return list(json_decoder.decode_list(data).items)

    # Build the validators and the transcoder's tables first (not measured).
    json_decoder.decode_list(b'{"metadata": {}, "items": []}')
    Pod.model_validate_json(b'{"metadata": {"name": "warm"}}')
    if fmt == "protobuf":
        Pod.model_validate(to_json_object(_POD, b""))
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu, start = time.process_time(), time.perf_counter()
    with gc_paused():
        pods = decode(body)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    floor = _python_build_floor(pods, body) if fmt == "json" else {}
    return {
        **floor,
        "format": fmt,
        "pods": len(pods),
        "body_mb": len(body) / 1e6,
        "server_seconds": server_seconds,
        "decode_seconds": wall,
        "decode_cpu_seconds": cpu,
        "decode_system_seconds": after.ru_stime - before.ru_stime,
        "minor_faults": after.ru_minflt - before.ru_minflt,
    }


def _python_build_floor(pods: list[Any], body: bytes) -> dict[str, float]:
    """µs per pod: pydantic validating each item's JSON, and building the same models in
    Python without parsing or checking anything (the floor of a Python-built decoder)."""
    import gc

    from pydantic import BaseModel

    from kubeinformers.generated.core.v1.models import Pod
    from kubeinformers.runtime.codec.gc_pause import gc_paused
    from kubeinformers.runtime.codec.json_list import decode_list_body

    new, set_attr = object.__new__, object.__setattr__

    def rebuild(value: Any) -> Any:
        if isinstance(value, BaseModel):
            copy = new(type(value))
            set_attr(copy, "__dict__", {k: rebuild(v) for k, v in value.__dict__.items()})
            set_attr(copy, "__pydantic_fields_set__", set(value.__pydantic_fields_set__))
            extra = value.__pydantic_extra__
            set_attr(
                copy,
                "__pydantic_extra__",
                None if extra is None else {k: rebuild(v) for k, v in extra.items()},
            )
            set_attr(copy, "__pydantic_private__", None)
            return copy
        if isinstance(value, list):
            return [rebuild(v) for v in value]
        if isinstance(value, dict):
            return {k: rebuild(v) for k, v in value.items()}
        return value

    items = [bytes(item) for item in decode_list_body(body).items or ()]
    validate = Pod.model_validate_json
    gc.collect()
    with gc_paused():
        start = time.process_time()
        validated = [validate(item) for item in items]
        validate_cpu = time.process_time() - start
        start = time.process_time()
        rebuilt = [rebuild(pod) for pod in pods]
        build_cpu = time.process_time() - start
    assert rebuilt == validated, "the rebuilt pods differ from the validated ones"
    n = max(len(items), 1)
    return {
        "validate_us_per_pod": validate_cpu / n * 1e6,
        "python_build_us_per_pod": build_cpu / n * 1e6,
    }


def _run_child(fmt: str, kubeconfig: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.eager_wire", "--child", fmt, "--kubeconfig", kubeconfig]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eager_wire")
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kubeconfig", help="an existing server holding the pods")
    parser.add_argument("--child", choices=("json", "protobuf"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.kubeconfig)))
        return 0
    server = None
    try:
        if args.kubeconfig:
            kubeconfig = args.kubeconfig
        else:
            server = RealBenchServer()
            server.load_pods(args.pods)
            kubeconfig = server.kubeconfig
        print(
            "format    body   server  decode wall  decode cpu  (system)  faults  max(server, cpu)"
        )
        for _ in range(args.rounds):
            for fmt in ("json", "protobuf"):
                r = _run_child(fmt, kubeconfig)
                print(
                    f"{r['format']:8s} {r['body_mb']:4.0f} MB {r['server_seconds']:6.2f} s"
                    f" {r['decode_seconds']:9.2f} s {r['decode_cpu_seconds']:9.2f} s"
                    f"  ({r['decode_system_seconds']:4.2f} s) {r['minor_faults']:7d}"
                    f"  {max(r['server_seconds'], r['decode_cpu_seconds']):6.2f} s"
                    f"  ({r['pods']} pods)"
                )
                if "python_build_us_per_pod" in r:
                    print(
                        f"  floor: pydantic validating one pod's JSON {r['validate_us_per_pod']:.0f} µs;"
                        f" building the same models in Python, unparsed and unchecked,"
                        f" {r['python_build_us_per_pod']:.0f} µs"
                    )
    finally:
        if server is not None:
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
