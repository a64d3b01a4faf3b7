"""One contender, one measurement, in a fresh process: `python -m bench.child NAME ...`.

Each run prints one JSON line. A fresh process per run keeps memory figures honest: the
RSS delta is what this contender's cache costs, nothing left over from another contender.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from bench.measure import MemoryProbe, full_collect, full_collection_seconds, rss_bytes, stopwatch

Result = dict[str, Any]


def _api_client(kubeconfig: str) -> Any:
    from kubernetes import config

    return config.new_client_from_config(config_file=kubeconfig)


def _read_identity(name: str, namespace: str, labels: Any, seen: list[int]) -> None:
    if name and namespace and labels is not None:
        seen[0] += 1


# ------------------------------------------------------------------------- informers


def kubeinformers_informer(
    kubeconfig: str,
    n: int,
    trace: bool,
    *,
    namespace: str,
    metadata_only: bool = False,
    decode: str = "lazy",
    wire_format: str = "protobuf",
    cache_compression: str = "none",
    read: bool = False,
) -> Result:
    """Our pod informer from the generated factory; a handler reads name, namespace, labels.

    Watch-list or LIST+WATCH follows KUBE_FEATURE_WatchListClient, as in client-go: the bench
    sets it per contender. With `read`, after the sync every cached pod is read as a
    reconcile reads it, then read whole (`_read_rows`), instead of the lister figures.
    """
    from kubeinformers.generated.informers import SharedInformerFactory

    api = _api_client(kubeconfig)
    seen = [0]
    done = threading.Event()

    def on_add(pod: Any, is_in_initial_list: bool) -> None:
        md = pod.metadata
        _read_identity(md.name, md.namespace, md.labels, seen)
        if seen[0] >= n:
            done.set()

    factory: Any
    if metadata_only:
        from kubeinformers.generated.meta.v1 import ObjectMeta
        from kubeinformers.runtime.cache.dynamic import MetadataSharedInformerFactory

        factory = MetadataSharedInformerFactory(api, metadata_model=ObjectMeta, namespace=namespace)
        informer: Any = factory.for_resource(_pods_gvr()).informer()
    else:
        factory = SharedInformerFactory(
            api,
            namespace=namespace,
            decode=decode,  # type: ignore[arg-type]
            wire_format=wire_format,  # type: ignore[arg-type]
            cache_compression=cache_compression,  # type: ignore[arg-type]
        )
        informer = factory.core().v1().pods().informer()
    informer.add_event_handler(on_add=on_add)
    probe = MemoryProbe(trace=trace)
    probe.start()
    with stopwatch() as synced:
        factory.start()
        factory.wait_for_cache_sync(timeout=600)
    done.wait(600)
    result: Result = {
        "sync_seconds": synced[0],
        "cpu_seconds": synced[1],
        "objects": len(informer.get_store().list_keys()),
    }
    result["handler_seen"] = seen[0]
    result |= probe.per_object(n)
    if read:
        result |= _read_rows(informer, n, probe.rss_before, synced[0])
    elif not metadata_only:
        result |= _lister_latency(factory, n)
    factory.shutdown()
    return result


def reconcile_read(pod: Any) -> int:
    """What a pod controller's reconcile reads: labels, each container's image and env,
    status.phase and conditions (issue 26). Returns a count so nothing is optimised away."""
    seen = len(pod.metadata.labels or ())
    for container in pod.spec.containers:
        seen += len(container.image or "")
        for env in container.env or ():
            seen += len(env.name) + len(env.value or "")
    status = pod.status
    seen += len(status.phase or "")
    for condition in status.conditions or ():
        seen += len(condition.type) + len(condition.status)
    return seen


def _read_every_field(obj: Any) -> None:
    """Read every field of a model and of the models, lists and maps inside it."""
    from pydantic import BaseModel

    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            stack.extend(getattr(item, name) for name in type(item).model_fields)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())


def _read_rows(informer: Any, n: int, rss_before: int, sync_seconds: float) -> Result:
    """Issue 26's rows: every cached pod read as a reconcile reads it (timed from the sync's
    start: `sync_and_read_seconds`), then every field of every pod (`materialize`, which
    builds what is still raw, then a walk of every field), with the RSS per pod after each
    and a full collection's cost with the fully read cache."""
    from kubeinformers.runtime.codec.gc_pause import end_read_burst
    from kubeinformers.runtime.codec.lazy import materialize

    pods = informer.get_store().list()
    with stopwatch() as t:
        for pod in pods:
            reconcile_read(pod)
        # The burst's end (K14, K16), as READ_QUIET without another first read would end it:
        # inside the timing, so what it costs counts.
        end_read_burst()
    full_collect()
    after_reconcile = rss_bytes() - rss_before
    with stopwatch() as full:
        for pod in pods:
            _read_every_field(materialize(pod))
        end_read_burst()
    full_collect()
    after_full = rss_bytes() - rss_before
    gc_after_full = full_collection_seconds()
    return {
        "reconcile_read_seconds": t[0],
        "reconcile_read_cpu_seconds": t[1],
        "sync_and_read_seconds": sync_seconds + t[0],
        "rss_per_object_after_reconcile": after_reconcile / max(n, 1),
        "full_read_seconds": full[0],
        "full_read_cpu_seconds": full[1],
        "sync_and_full_read_seconds": sync_seconds + t[0] + full[0],
        "rss_per_object_after_full_read": after_full / max(n, 1),
        "full_gc_seconds_after_full_read": gc_after_full["full_gc_seconds"],
    }


def _pods_gvr() -> Any:
    from kubeinformers.runtime.api.resource import GroupVersionResource

    return GroupVersionResource("", "v1", "pods")


def _lister_latency(factory: Any, n: int) -> Result:
    lister = factory.core().v1().pods().lister()
    objs = lister.list()
    rng = random.Random(7)
    sample = [
        (o.metadata.namespace, o.metadata.name) for o in rng.sample(objs, min(1000, len(objs)))
    ]
    ns_listers = {ns: lister.pods(ns) for ns, _ in sample}
    start = time.perf_counter()
    for ns, name in sample:
        ns_listers[ns].get(name)
    get_us = (time.perf_counter() - start) / len(sample) * 1e6
    namespace = sample[0][0]
    start = time.perf_counter()
    for _ in range(20):
        lister.pods(namespace).list()
    ns_list_ms = (time.perf_counter() - start) / 20 * 1e3
    start = time.perf_counter()
    for _ in range(5):
        matched = lister.list(selector="tier in (fe,be),app!=svc-1")
    selector_ms = (time.perf_counter() - start) / 5 * 1e3
    # The first full read of cached objects (the sampled 1,000, never read beyond their
    # identity so far): inflate (compact store) + transcode + validate, per pod. Last: it
    # builds the models, which the memory figures above must not include.
    got = [ns_listers[ns].get(name) for ns, name in sample]
    start = time.perf_counter()
    for pod in got:
        pod.spec  # noqa: B018 - the read builds the model
    materialise_us = (time.perf_counter() - start) / len(got) * 1e6
    return {
        "lister_get_us": get_us,
        "lister_namespace_list_ms": ns_list_ms,
        "lister_selector_list_ms": selector_ms,
        "lister_selector_matched": len(matched),
        "materialise_us": materialise_us,
    }


def official_informer(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    """The official client's kubernetes.informer.SharedInformer over list_namespaced_pod."""
    from kubernetes import client
    from kubernetes.informer import SharedInformer

    api = _api_client(kubeconfig)
    seen = [0]
    done = threading.Event()

    def on_added(pod: Any) -> None:
        md = pod.metadata
        _read_identity(md.name, md.namespace, md.labels, seen)
        if seen[0] >= n:
            done.set()

    informer = SharedInformer(partial(client.CoreV1Api(api).list_namespaced_pod, namespace))
    informer.add_event_handler("ADDED", on_added)
    probe = MemoryProbe(trace=trace)
    probe.start()
    with stopwatch() as synced:
        informer.start()
        done.wait(600)
    result: Result = {
        "sync_seconds": synced[0],
        "cpu_seconds": synced[1],
        "objects": len(informer.cache.list_keys()),
    }
    result["handler_seen"] = seen[0]
    result |= probe.per_object(n)
    # Not `informer.stop()`: it joins the informer's thread, which waits inside the watch for
    # the next event or the server's timeout (with a slow measurement above, the watch has
    # started by now and nothing is written). The thread is a daemon; this process exits next.
    informer._stop_event.set()
    return result


# ---------------------------------------------------------------------------- floors


def raw_orjson(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    """The floor: one GET of the whole list (gzip, as our transport and client-go ask), then
    orjson.loads into dicts: no informer, no model."""
    import orjson

    api = _api_client(kubeconfig)
    probe = MemoryProbe(trace=trace)
    probe.start()
    with stopwatch() as t:
        # resourceVersion 0, as the informers' first list: served from the watch cache (without it
        # the server makes a consistent read, slower than any informer's list).
        body = _raw_get(api, f"/api/v1/namespaces/{namespace}/pods", [("resourceVersion", "0")])
        items = orjson.loads(body)["items"]
    del body
    return {"sync_seconds": t[0], "cpu_seconds": t[1], "objects": len(items)} | probe.per_object(n)


def pydantic_floor(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    """A floor, not a contender: what any implementation that returns the generated pydantic
    models must pay at least for issue 26's reads, measured on the same pods.

    The pods are fetched as JSON and cut, before any timing, into the JSON of what the
    reconcile read touches (`spec.containers`, `status.conditions`; `status.phase` is a
    string and the labels are decoded at the sync) and, for the full read, of the whole pod.
    `exact_read_*` is the strictest floor: each value the reconcile read returns (every
    container's `image` and `env`, `status.phase`, `status.conditions`) validated alone, as
    a read that builds only the fields it touches would, with no cost of finding them.
    `found_read_*` adds the cheapest finding there is: each pod's whole JSON decoded by
    msgspec (C) into structs naming only those values (kept raw, everything else skipped),
    then each value validated alone as above: no Python of ours between the bytes and the
    models, so what a lazy reader of the bytes cannot beat.
    Then, with the cyclic collector off, pydantic's fastest path (`validate_json` of bytes,
    the generated models' own validators) builds them: `reconcile_read_*` is the time to
    validate the containers and conditions of every pod, `rss_per_object_after_reconcile` the
    RSS those models hold per pod; `full_read_*` and `rss_per_object_after_full_read` the same
    for every whole `Pod`. No informer, no transcode, no laziness, no wire: models only.
    Nothing is freed before the models are built (freed memory would be reused unseen by
    RSS); `traced_*` are tracemalloc's exact bytes of the same models, from a second pass."""
    import gc
    import tracemalloc

    import msgspec
    from pydantic import TypeAdapter

    from kubeinformers.generated.core.v1 import Container, EnvVar, Pod, PodCondition

    api = _api_client(kubeconfig)
    body = _raw_get(api, f"/api/v1/namespaces/{namespace}/pods", [("resourceVersion", "0")])
    items = msgspec.json.decode(body)["items"]
    encode = msgspec.json.encode
    parts = [
        (
            encode(pod["spec"]["containers"]),
            encode((pod.get("status") or {}).get("conditions") or []),
            (pod.get("status") or {}).get("phase"),
        )
        for pod in items
    ]
    exact_parts = [
        (
            [(encode(c.get("image")), encode(c.get("env"))) for c in pod["spec"]["containers"]],
            encode((pod.get("status") or {}).get("phase")),
            encode((pod.get("status") or {}).get("conditions")),
        )
        for pod in items
    ]
    wholes = [encode(pod) for pod in items]

    # The values a reconcile reads, found in a pod's JSON by msgspec's typed decode (C):
    # unnamed fields are skipped without being built. (defstruct: the annotations of a
    # class here would be strings msgspec cannot resolve.)
    null = msgspec.Raw(b"null")  # an absent value: validated as JSON's null
    container_t = msgspec.defstruct(
        "Container", [("image", msgspec.Raw, null), ("env", msgspec.Raw, null)]
    )
    spec_t = msgspec.defstruct("Spec", [("containers", list[container_t], [])])  # type: ignore[valid-type]
    status_t = msgspec.defstruct(
        "Status", [("phase", msgspec.Raw, null), ("conditions", msgspec.Raw, null)]
    )
    pod_t = msgspec.defstruct(
        "Pod",
        [("spec", spec_t | None, None), ("status", status_t | None, None)],
    )
    find: Callable[[bytes], Any] = msgspec.json.Decoder(pod_t).decode
    no_spec: Any = spec_t()
    no_status: Any = status_t()
    containers = TypeAdapter(list[Container]).validate_json
    conditions = TypeAdapter(list[PodCondition]).validate_json
    conditions_or_none = TypeAdapter(list[PodCondition] | None).validate_json
    string = TypeAdapter(str | None).validate_json
    env_vars = TypeAdapter(list[EnvVar] | None).validate_json
    pod_of = Pod.model_validate_json

    def reconcile() -> list[Any]:
        return [(containers(c), conditions(k), phase) for c, k, phase in parts]

    def exact() -> list[Any]:
        return [
            ([(string(i), env_vars(e)) for i, e in cs], string(ph), conditions_or_none(k))
            for cs, ph, k in exact_parts
        ]

    def found() -> list[Any]:
        out = []
        for raw in wholes:
            pod = find(raw)
            spec = pod.spec or no_spec
            status = pod.status or no_status
            out.append(
                (
                    [(string(bytes(c.image)), env_vars(bytes(c.env))) for c in spec.containers],
                    string(bytes(status.phase)),
                    conditions_or_none(bytes(status.conditions)),
                )
            )
        return out

    def whole() -> list[Any]:
        return [pod_of(raw) for raw in wholes]

    containers(parts[0][0])  # the validators' own first-use costs, out of the timing
    conditions(parts[0][1])
    pod_of(wholes[0])
    gc.disable()
    full_collect()
    with stopwatch() as ex:
        exact_read = exact()
    del exact_read
    full_collect()
    with stopwatch() as fo:
        found_read = found()
    del found_read
    full_collect()
    rss_before = rss_bytes()
    with stopwatch() as t:
        read = reconcile()
    full_collect()
    after_reconcile = rss_bytes() - rss_before
    rss_before_full = rss_bytes()
    with stopwatch() as full:
        built = whole()
    full_collect()
    after_full = rss_bytes() - rss_before_full
    count = len(built)
    del read, built
    full_collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    read = reconcile()
    traced_reconcile = tracemalloc.get_traced_memory()[0] - base
    del read
    base = tracemalloc.get_traced_memory()[0]
    built = whole()
    traced_full = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del built
    gc.enable()
    return {
        "objects": count,
        "exact_read_seconds": ex[0],
        "exact_read_cpu_seconds": ex[1],
        "found_read_seconds": fo[0],
        "found_read_cpu_seconds": fo[1],
        "reconcile_read_seconds": t[0],
        "reconcile_read_cpu_seconds": t[1],
        "rss_per_object_after_reconcile": after_reconcile / max(n, 1),
        "traced_per_object_after_reconcile": traced_reconcile / max(n, 1),
        "full_read_seconds": full[0],
        "full_read_cpu_seconds": full[1],
        "rss_per_object_after_full_read": after_full / max(n, 1),
        "traced_per_object_after_full_read": traced_full / max(n, 1),
    }


def _watch_list_bytes(kubeconfig: str, namespace: str, accept: str, trace: bool) -> Result:
    """A floor: the watch-list's bytes read to the initial-events-end bookmark, nothing decoded.

    With `accept` JSON it is what our informer receives; with protobuf, what client-go's
    clientset asks for built-in kinds (its default since kubernetes#125314, client-go v0.31):
    the difference is the server's encoding and the bytes on the wire.
    """
    api = _api_client(kubeconfig)
    headers: dict[str, str] = {"Accept": accept}
    path = f"/api/v1/namespaces/{namespace}/pods"
    from kubeinformers.runtime.client.auth import apply_auth

    apply_auth(api, headers, [], path)
    query = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
    query += "&resourceVersionMatch=NotOlderThan&timeoutSeconds=300"
    size = 0
    with stopwatch() as t:
        resp = api.rest_client.pool_manager.request(
            "GET",
            f"{api.configuration.host}{path}?{query}",
            headers=headers,
            preload_content=False,
        )
        for chunk in resp.read_chunked(None, decode_content=True):
            size += len(chunk)
            if b"k8s.io/initial-events-end" in chunk:
                break
    resp.close()
    return {"sync_seconds": t[0], "cpu_seconds": t[1], "bytes": size}


def watch_list_json_bytes(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    return _watch_list_bytes(kubeconfig, namespace, "application/json", trace)


def watch_list_protobuf_bytes(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    return _watch_list_bytes(kubeconfig, namespace, "application/vnd.kubernetes.protobuf", trace)


def _raw_get(api: Any, path: str, query: list[tuple[str, str]] | None = None) -> bytes:
    headers: dict[str, str] = {"Accept": "application/json", "Accept-Encoding": "gzip"}
    from kubeinformers.runtime.client.auth import apply_auth

    apply_auth(api, headers, [], path)
    from urllib.parse import urlencode

    url = api.configuration.host + path + (("?" + urlencode(query)) if query else "")
    resp = api.rest_client.pool_manager.request("GET", url, headers=headers, preload_content=True)
    data: bytes = resp.data
    return data


# ---------------------------------------------------------------------- watch replay


def kubeinformers_replay(
    kubeconfig: str, n: int, trace: bool, *, namespace: str, from_rv: str = ""
) -> Result:
    """M buffered events from an old resourceVersion through decode → DeltaFIFO → indexer → handler."""
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.registry import RESOURCES
    from kubeinformers.runtime.api.listwatch import ListOptions, ObjectList
    from kubeinformers.runtime.cache.informer import SharedIndexInformer
    from kubeinformers.runtime.client.transport import ApiListerWatcher

    api = _api_client(kubeconfig)
    pods_resource = next(r for r in RESOURCES if r.group == "" and r.resource == "pods")
    inner: ApiListerWatcher[Pod] = ApiListerWatcher(api, pods_resource, Pod, namespace=namespace)

    class FromOldVersion:
        """Lists nothing at `from_rv`, so the watch replays the server's history from there."""

        def list(self, options: ListOptions) -> ObjectList[Pod]:
            return ObjectList(items=[], resource_version=from_rv)

        def watch(self, options: ListOptions) -> Any:
            return inner.watch(options)

        def is_watch_list_semantics_unsupported(self) -> bool:
            return True

    seen = [0]
    done = threading.Event()

    def count(*_: Any) -> None:
        seen[0] += 1
        if seen[0] >= n:
            done.set()

    informer = SharedIndexInformer(FromOldVersion(), Pod)
    informer.add_event_handler(on_add=lambda o, _i: count(), on_update=lambda o, p: count())
    stop = threading.Event()
    with stopwatch() as t:
        thread = threading.Thread(target=informer.run, args=(stop,))
        thread.start()
        done.wait(600)
    stop.set()
    thread.join(10)
    return {
        "replay_seconds": t[0],
        "cpu_seconds": t[1],
        "events": seen[0],
        "events_per_second": seen[0] / t[0],
    }


def kubeinformers_watch(
    kubeconfig: str,
    n: int,
    trace: bool,
    *,
    namespace: str,
    from_rv: str = "",
    wire_format: str = "protobuf",
) -> Result:
    """Our watch alone from the old resourceVersion, decode only: what client-go's probe
    measures (a raw Watch's ResultChan), without the informer pipeline behind it."""
    from kubeinformers.generated.core.v1 import Pod
    from kubeinformers.generated.registry import RESOURCES
    from kubeinformers.runtime.api.listwatch import ListOptions
    from kubeinformers.runtime.client.transport import ApiListerWatcher

    api = _api_client(kubeconfig)
    pods_resource = next(r for r in RESOURCES if r.group == "" and r.resource == "pods")
    lw: ApiListerWatcher[Pod] = ApiListerWatcher(
        api,
        pods_resource,
        Pod,
        namespace=namespace,
        wire_format=wire_format,  # type: ignore[arg-type]
    )

    def measured_watch() -> int:
        seen = 0
        w = lw.watch(ListOptions(resource_version=from_rv))
        for _event in w:
            seen += 1
            if seen >= n:
                break
        w.stop()
        return seen

    with stopwatch() as t:
        seen = measured_watch()
    return {
        "replay_seconds": t[0],
        "cpu_seconds": t[1],
        "events": seen,
        "events_per_second": seen / t[0],
    }


def official_replay(
    kubeconfig: str, n: int, trace: bool, *, namespace: str, from_rv: str = ""
) -> Result:
    """The official client's Watch.stream from the same old resourceVersion."""
    from kubernetes import client, watch

    api = _api_client(kubeconfig)
    seen = 0
    w = watch.Watch()
    with stopwatch() as t:
        for _event in w.stream(
            client.CoreV1Api(api).list_namespaced_pod, namespace, resource_version=from_rv
        ):
            seen += 1
            if seen >= n:
                w.stop()
                break
    return {
        "replay_seconds": t[0],
        "cpu_seconds": t[1],
        "events": seen,
        "events_per_second": seen / t[0],
    }


def import_time(kubeconfig: str, n: int, trace: bool, *, namespace: str) -> Result:
    """`import kubeinformers.generated` plus building the first pod informer, from cold.

    The user's ApiClient (the `kubernetes` package's config) exists before: it is theirs,
    not ours, and costs the same with any informer library.
    """
    api = _api_client(kubeconfig)
    before = set(sys.modules)
    start = time.perf_counter()
    from kubeinformers.generated.informers import SharedInformerFactory

    factory = SharedInformerFactory(api)
    factory.core().v1().pods().informer()
    elapsed = time.perf_counter() - start
    return {
        "import_and_first_informer_seconds": elapsed,
        "modules_imported": len(set(sys.modules) - before),
    }


CONTENDERS: dict[str, Callable[..., Result]] = {
    "kubeinformers": kubeinformers_informer,
    "kubeinformers-eager": partial(kubeinformers_informer, decode="eager"),
    "kubeinformers-json": partial(kubeinformers_informer, wire_format="json"),
    "kubeinformers-compact": partial(kubeinformers_informer, cache_compression="zlib"),
    "kubeinformers-metadata": partial(kubeinformers_informer, metadata_only=True),
    "kubeinformers-read": partial(kubeinformers_informer, read=True),
    "kubeinformers-json-read": partial(kubeinformers_informer, wire_format="json", read=True),
    "kubeinformers-eager-read": partial(kubeinformers_informer, decode="eager", read=True),
    "official-informer": official_informer,
    "raw-orjson": raw_orjson,
    "pydantic-floor": pydantic_floor,
    "watch-list-json-bytes": watch_list_json_bytes,
    "watch-list-protobuf-bytes": watch_list_protobuf_bytes,
    "kubeinformers-replay": kubeinformers_replay,
    "kubeinformers-watch": kubeinformers_watch,
    "kubeinformers-watch-json": partial(kubeinformers_watch, wire_format="json"),
    "official-replay": official_replay,
    "import-time": import_time,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.child")
    parser.add_argument("contender", choices=sorted(CONTENDERS))
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--trace", action="store_true", help="measure with tracemalloc (slower)")
    parser.add_argument("--from-rv", default="")
    args = parser.parse_args(argv)
    fn = CONTENDERS[args.contender]
    full_collect()
    kwargs = {"from_rv": args.from_rv} if args.from_rv else {}
    result = fn(args.kubeconfig, args.n, args.trace, namespace=args.namespace, **kwargs)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
