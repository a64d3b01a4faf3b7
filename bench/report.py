"""The bench's report: the tables with ratios against client-go and the official client, and
the verdict on each target of issue 16 (plus the lister and import targets of issue 7)."""

from __future__ import annotations

from typing import Any

METHOD = (
    "One server holds N realistic pods (bench/pods.py, ~2.5 KB of JSON each, status written "
    "as a kubelet would) in one namespace, loaded once and shared by every contender. Every "
    "measurement runs in a fresh process; contenders are alternated within a round (forward, "
    "then reversed), median of the rounds with [min-max]. Before each, a real server "
    "collects its garbage (Go's collector, via /debug/pprof/heap?gc=1), so that no contender "
    "pays for a collection of what the ones before it left: one costs the server 0.35-0.5 s "
    "of CPU and, landing in a sync, slows it by ~0.2 s. Sync = informer start until its "
    "cache reports synced (kubeinformers: wait_for_cache_sync; client-go: WaitForCacheSync, "
    "which polls every 100 ms, so its times are rounded up to 0.1 s). RSS per pod = RSS after "
    "the sync and a full collection minus RSS after imports and informer construction, "
    "divided by N; peak/after = the peak RSS (VmHWM; the probe's sampled from /proc every "
    "5 ms) over that baseline against the RSS over it after the sync. Watch replay = M "
    "MODIFIED events buffered in the server's watch cache, watched from the resourceVersion "
    "before them: kubeinformers through its whole informer pipeline (decode, DeltaFIFO, "
    "indexer, a handler) and through its watch alone (decode only), the official client "
    "through Watch.stream, client-go through a raw Watch's ResultChan (decode only); the "
    "replay target compares the decode-only figures. Watch-list on or off follows KUBE_FEATURE_WatchListClient, "
    "set per contender for kubeinformers and client-go alike. Wire formats: client-go's "
    'clientset and kubeinformers (wire_format="protobuf", its default) ask for protobuf for '
    "built-in kinds (client-go's default since kubernetes#125314); the official client, "
    'kubeinformers\' `lazy over JSON` row and decode="eager" ask for JSON; the watch-list floors '
    "read the same watch-list's bytes in each format without decoding anything."
)

READ_ROWS = (
    "kubeinformers-read",
    "base-read",
    "kubeinformers-json-read",
    "base-json-read",
    "kubeinformers-eager-read",
)
FLOOR = "pydantic-floor"
SYNC_ROWS = (
    "kubeinformers",
    "kubeinformers-listwatch",
    "kubeinformers-json",
    "kubeinformers-json-listwatch",
    "kubeinformers-eager",
    "kubeinformers-eager-listwatch",
    "kubeinformers-compact",
    "kubeinformers-metadata",
    "official-informer",
    "client-go",
    "client-go-listwatch",
    "raw-orjson",
    "watch-list-json-bytes",
    "watch-list-protobuf-bytes",
)
REFERENCES = (
    ("client-go", "/cg-WL"),
    ("client-go-listwatch", "/cg-LW"),
    ("official-informer", "/off"),
)


def _ratio(a: Any, b: Any) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not b:
        return "-"
    return f"{a / b:.2f}x"


def _num(v: Any, fmt: str = "{:,.2f}") -> str:
    return "-" if not isinstance(v, (int, float)) else fmt.format(v)


def _median_range(med: Any, rng: Any, fmt: str) -> str:
    if not isinstance(med, (int, float)):
        return "-"
    text = fmt.format(med)
    if rng:
        text += f" [{fmt.format(rng[0])}-{fmt.format(rng[1])}]"
    return text


def print_read_report(r: dict[str, Any]) -> None:
    """Issue 26: what a controller experiences, against client-go, whose objects are fully
    decoded when its sync ends (its sync time and RSS are its 'read everything' figures);
    then the pydantic floor (bench.child.pydantic_floor) in the same units."""
    med, spread, labels, n = r["sync"]["median"], r["sync"]["min_max"], r["labels"], r["n"]
    cg = med.get("client-go", {})
    cg_sync, cg_rss = cg.get("sync_seconds"), cg.get("rss_per_object")
    print(
        f"{'a controller: sync, then every pod read':<42} {'sync s':>6} "
        f"{'sync+reconcile s [min-max]':>26} {'/cg':>6} {'read us/pod':>11} "
        f"{'CPU us/pod':>10} {'full read s':>11} {'CPU s':>6}"
    )
    for name in READ_ROWS:
        if name not in med:
            continue
        mm = med[name]
        both = mm.get("sync_and_read_seconds")
        line = f"{labels[name]:<42} {_num(mm.get('sync_seconds')):>6} "
        line += f"{_median_range(both, spread[name].get('sync_and_read_seconds'), '{:.2f}'):>26}"
        line += f" {_ratio(both, cg_sync):>6}"
        read = mm.get("reconcile_read_seconds")
        cpu = mm.get("reconcile_read_cpu_seconds")
        line += f" {_num(read / n * 1e6 if read else None, '{:,.1f}'):>11}"
        line += f" {_num(cpu / n * 1e6 if cpu else None, '{:,.1f}'):>10}"
        line += f" {_num(mm.get('full_read_seconds')):>11}"
        line += f" {_num(mm.get('full_read_cpu_seconds')):>6}"
        print(line)
    if cg:
        print(f"{labels['client-go']:<42} {_num(cg_sync):>6}")
    print()
    print(
        f"{'RSS per pod, KB (/cg = against client-go)':<42} {'before read':>12} {'/cg':>6} "
        f"{'after reconcile':>16} {'/cg':>6} {'after full read':>16} {'/cg':>6} {'full GC s':>9}"
    )
    for name in READ_ROWS:
        if name not in med:
            continue
        mm = med[name]
        line = f"{labels[name]:<42}"
        for key, width in (
            ("rss_per_object", 12),
            ("rss_per_object_after_reconcile", 16),
            ("rss_per_object_after_full_read", 16),
        ):
            v = mm.get(key)
            line += f" {_num(v / 1024 if v else None, '{:.1f}'):>{width}}"
            line += f" {_ratio(v, cg_rss):>6}"
        line += f" {_num(mm.get('full_gc_seconds_after_full_read'), '{:.3f}'):>9}"
        print(line)
    if cg:
        print(f"{labels['client-go']:<42} {_num(cg_rss / 1024 if cg_rss else None, '{:.1f}'):>12}")
    print(
        "(reconcile read = labels, each container's image and env, status.phase and conditions"
        " of every cached pod;\n full read = every field of every pod; full GC s = one full"
        " collection with every pod fully read)"
    )
    floor = med.get(FLOOR)
    if not floor:
        return
    ours = med.get("kubeinformers-read", {})
    print()
    print(
        f"{'FLOOR, not a contender: pydantic alone':<42} {'us/pod':>7} {'CPU us':>7} "
        f"{'s, N pods':>9} {'/cg sync':>8} {'ours sync+it /cg':>16} {'KB/pod':>7} {'/cg':>6}"
        f" {'traced KB':>9}"
    )
    for what, seconds, cpu, rss, traced in (
        (
            "the values the read returns, each alone",
            "exact_read_seconds",
            "exact_read_cpu_seconds",
            None,  # timed only: its models are a few small ones per pod
            None,
        ),
        (
            "found in the bytes (msgspec), each alone",
            "found_read_seconds",
            "found_read_cpu_seconds",
            None,
            None,
        ),
        (
            "reconcile read's parts validated",
            "reconcile_read_seconds",
            "reconcile_read_cpu_seconds",
            "rss_per_object_after_reconcile",
            "traced_per_object_after_reconcile",
        ),
        (
            "whole Pod validated",
            "full_read_seconds",
            "full_read_cpu_seconds",
            "rss_per_object_after_full_read",
            "traced_per_object_after_full_read",
        ),
    ):
        t, c = floor.get(seconds), floor.get(cpu)
        kb = floor.get(rss) if rss else None
        tb = floor.get(traced) if traced else None
        best = _sum(ours.get("sync_seconds"), t)
        line = f"{what:<42} {_num(t / n * 1e6 if t else None, '{:.1f}'):>7}"
        line += f" {_num(c / n * 1e6 if c else None, '{:.1f}'):>7} {_num(t):>9}"
        line += f" {_ratio(t, cg_sync):>8} {_ratio(best, cg_sync):>16}"
        line += f" {_num(kb / 1024 if kb else None, '{:.1f}'):>7} {_ratio(kb, cg_rss):>6}"
        line += f" {_num(tb / 1024 if tb else None, '{:.1f}'):>9}"
        print(line)
    print(
        "(what any implementation returning the generated models pays at least: the same pods'"
        " JSON, cut beforehand into\n each value the read returns (every container's image and"
        " env, status.phase and .conditions), the parts read\n (spec.containers,"
        " status.conditions) or the whole pod, validated with validate_json, GC off;\n"
        " 'found in the bytes': each pod's JSON first decoded by msgspec into structs naming"
        " only the values read, the rest skipped;\n"
        " KB/pod = the RSS of the models alone (traced KB: tracemalloc's bytes of them);\n 'ours sync+it' = our"
        " default's sync plus the floor's read)"
    )


def _sum(a: Any, b: Any) -> float | None:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return None
    return float(a + b)


def print_report(r: dict[str, Any]) -> None:
    med, spread, labels = r["sync"]["median"], r["sync"]["min_max"], r["labels"]
    m = r["machine"]
    print()
    print(f"=== {r['n']:,} pods on {r['server']['label']} ===")
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average "
        f"{m['loadavg_before'][0]:.1f} before, {m['loadavg_after'][0]:.1f} after"
    )
    if any(name in med for name in READ_ROWS):
        print_read_report(r)
        print()
    head = f"{'contender':<42} {'sync s median [min-max]':>26}"
    head += "".join(f" {h:>7}" for _, h in REFERENCES)
    head += f" {'CPU s':>6}" + "".join(f" {h:>7}" for _, h in REFERENCES[:2])
    head += f" {'server CPU s':>12}"
    print(head)
    for name in SYNC_ROWS:
        if name not in med:
            continue
        s = med[name].get("sync_seconds")
        line = f"{labels[name]:<42} "
        line += f"{_median_range(s, spread[name]['sync_seconds'], '{:.2f}'):>26}"
        for ref, _ in REFERENCES:
            line += f" {_ratio(s, med.get(ref, {}).get('sync_seconds')):>7}"
        cpu = med[name].get("cpu_seconds")
        line += f" {_num(cpu):>6}"
        for ref, _ in REFERENCES[:2]:
            line += f" {_ratio(cpu, med.get(ref, {}).get('cpu_seconds')):>7}"
        line += f" {_num(med[name].get('server_cpu_seconds')):>12}"
        print(line)
    print(
        "(client-go's sync is rounded up to its 100 ms WaitForCacheSync poll; CPU s = the client"
        " process's CPU time during the sync,\n all threads, less sensitive to a busy machine than"
        " wall time; client-go's is its whole process, start-up included.\n Wire formats: client-go"
        " and our default ask for protobuf for built-in kinds (kubernetes#125314); the official"
        " client,\n our `lazy over JSON` row and eager ask for JSON; the two watch-list floors show"
        " what each costs the server before any decoding.\n server CPU s = kube-apiserver's and"
        " etcd's CPU time during the contender's whole run, its sync and its idle watch after)"
    )
    print()
    head = f"{'contender':<42} {'RSS/pod KB':>20} {'traced':>7}"
    head += "".join(f" {h:>7}" for _, h in REFERENCES) + f" {'peak/after':>10} {'traced':>6}"
    head += f" {'full GC s':>9} {'frozen':>6}"
    print(head)
    for name in SYNC_ROWS:
        if name not in med:
            continue
        mm = med[name]
        rss = mm.get("rss_per_object")
        rng = spread[name]["rss_per_object"]
        kb = [x / 1024 for x in rng] if rng else None
        line = f"{labels[name]:<42} "
        line += f"{_median_range(rss / 1024 if rss else None, kb, '{:.1f}'):>20}"
        line += f" {_num(mm.get('traced_per_object'), '{:,.0f}'):>7}"
        for ref, _ in REFERENCES:
            line += f" {_ratio(rss, med.get(ref, {}).get('rss_per_object')):>7}"
        peak, after = mm.get("peak_rss_over_baseline"), mm.get("rss_after_over_baseline")
        line += f" {_ratio(peak, after):>10}"
        line += f" {_num(mm.get('traced_peak_over_after'), '{:.2f}x'):>6}"
        line += f" {_num(mm.get('full_gc_seconds'), '{:.3f}'):>9}"
        line += f" {_num(mm.get('full_gc_frozen_seconds'), '{:.3f}'):>6}"
        print(line)
    print(
        "(ratios are of RSS per pod; peak/after = peak RSS during the sync over RSS after it,"
        " both above the baseline;\n traced = tracemalloc bytes per pod and traced peak/after,"
        " from one extra run: Python keeps freed memory, so RSS hides a transient copy;\n full GC s ="
        " one full collection of Python's cyclic collector with the cache in place, every thread"
        " stopped meanwhile;\n frozen = the same after gc.freeze(), which the guide suggests for"
        " big eager caches; Go's collector runs concurrently)"
    )
    print()
    print(
        f"{'cache reads (' + format(r['n'], ',') + ' pods cached)':<42} {'lister get us':>14} {'first full read us':>18}"
    )
    for name in ("kubeinformers", "kubeinformers-compact"):
        if name in med:
            line = f"{labels[name]:<42} {_num(med[name].get('lister_get_us')):>14}"
            print(line + f" {_num(med[name].get('materialise_us'), '{:,.0f}'):>18}")
    print(
        "(first full read = the first access of a non-identity field of 1,000 cached pods: inflate"
        " (compact store), transcode, validate)"
    )
    print()
    rep, rep_spread = r["replay"]["median"], r["replay"]["min_max"]
    print(
        f"{'watch replay of ' + format(r['events'], ',') + ' events':<42} "
        f"{'events/s median [min-max]':>26} {'/cg':>7} {'/off':>7} {'CPU s':>6}"
    )
    for name in (
        "kubeinformers-replay",
        "kubeinformers-watch",
        "kubeinformers-watch-json",
        "official-replay",
        "client-go-replay",
    ):
        if name not in rep:
            continue
        e = rep[name].get("events_per_second")
        line = f"{labels[name]:<42} {_median_range(e, rep_spread[name], '{:,.0f}'):>26}"
        line += f" {_ratio(e, rep.get('client-go-replay', {}).get('events_per_second')):>7}"
        line += f" {_ratio(e, rep.get('official-replay', {}).get('events_per_second')):>7}"
        line += f" {_num(rep[name].get('cpu_seconds')):>6}"
        print(line)
    print()
    print(f"{'target':<52} {'measured':>10} {'met':>5}")
    for v in r["targets"]:
        value = v["value"]
        shown = (
            "-" if value is None else (f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}")
        )
        print(f"{v['target']:<52} {shown:>10} {v['met']:>5}")


def _get(d: dict[str, Any], *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def _div(a: Any, b: Any) -> float | None:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return float(a) / float(b)
    return None


def verdicts(r: dict[str, Any]) -> list[dict[str, Any]]:
    med, rep, n = r["sync"]["median"], r["replay"]["median"], r["n"]

    def sync(c: str) -> Any:
        return _get(med, c, "sync_seconds")

    def rss(c: str) -> Any:
        return _get(med, c, "rss_per_object")

    ours = med.get("kubeinformers", {})
    reader = med.get("kubeinformers-read", {})
    targets: list[tuple[str, float | None, float | None, str]] = [
        # Issue 26: a controller's view, ours default against client-go default.
        (
            "sync + reconcile read / client-go sync (<= 1.2)",
            _div(reader.get("sync_and_read_seconds"), sync("client-go")),
            1.2,
            "le",
        ),
        (
            "RSS/pod after reconcile read / client-go (<= 0.6)",
            _div(reader.get("rss_per_object_after_reconcile"), rss("client-go")),
            0.6,
            "le",
        ),
        (
            "RSS/pod after full read / client-go (<= 1.0)",
            _div(reader.get("rss_per_object_after_full_read"), rss("client-go")),
            1.0,
            "le",
        ),
        (
            "RSS/pod before any read / client-go (<= 0.5)",
            _div(reader.get("rss_per_object"), rss("client-go")),
            0.5,
            "le",
        ),
        (
            "sync + reconcile read, JSON / client-go sync",
            _div(_get(med, "kubeinformers-json-read", "sync_and_read_seconds"), sync("client-go")),
            None,
            "",
        ),
        (
            "sync + reconcile read, eager / client-go sync",
            _div(_get(med, "kubeinformers-eager-read", "sync_and_read_seconds"), sync("client-go")),
            None,
            "",
        ),
        # The pydantic floor (a floor, not a contender): what the targets above cannot beat
        # while objects are the generated models.
        (
            "FLOOR: our sync + pydantic's reconcile-read validation / client-go sync",
            _div(
                _sum(reader.get("sync_seconds"), _get(med, FLOOR, "reconcile_read_seconds")),
                sync("client-go"),
            ),
            None,
            "",
        ),
        (
            "FLOOR: our sync + pydantic validating each value read alone / client-go sync",
            _div(
                _sum(reader.get("sync_seconds"), _get(med, FLOOR, "exact_read_seconds")),
                sync("client-go"),
            ),
            None,
            "",
        ),
        (
            "FLOOR: our sync + those values found in the bytes (msgspec) and validated"
            " / client-go sync",
            _div(
                _sum(reader.get("sync_seconds"), _get(med, FLOOR, "found_read_seconds")),
                sync("client-go"),
            ),
            None,
            "",
        ),
        (
            "FLOOR: RSS/pod of the reconcile read's models alone / client-go",
            _div(_get(med, FLOOR, "rss_per_object_after_reconcile"), rss("client-go")),
            None,
            "",
        ),
        (
            "FLOOR: RSS/pod of whole Pod models alone / client-go",
            _div(_get(med, FLOOR, "rss_per_object_after_full_read"), rss("client-go")),
            None,
            "",
        ),
        # The bound is for 100,000 pods; a full collection scales with what is cached.
        (
            f"full GC s, every pod fully read (<= {0.2 * n / 100_000:g})",
            reader.get("full_gc_seconds_after_full_read"),
            0.2 * n / 100_000,
            "le",
        ),
        (
            "sync: ours default / client-go default (<= 1.0)",
            _div(sync("kubeinformers"), sync("client-go")),
            1.0,
            "le",
        ),
        (
            "sync: ours LIST+WATCH / client-go LIST+WATCH (<= 1.0)",
            _div(sync("kubeinformers-listwatch"), sync("client-go-listwatch")),
            1.0,
            "le",
        ),
        (
            "sync: ours watch-list / ours LIST+WATCH (<= 1.15)",
            _div(sync("kubeinformers"), sync("kubeinformers-listwatch")),
            1.15,
            "le",
        ),
        # Like for like: client-go's probe decodes a raw watch, with no informer behind it.
        (
            "replay: our watch / client-go watch events/s (>= 1.0)",
            _div(
                _get(rep, "kubeinformers-watch", "events_per_second"),
                _get(rep, "client-go-replay", "events_per_second"),
            ),
            1.0,
            "ge",
        ),
        (
            "replay: our whole informer / client-go watch",
            _div(
                _get(rep, "kubeinformers-replay", "events_per_second"),
                _get(rep, "client-go-replay", "events_per_second"),
            ),
            None,
            "",
        ),
        (
            "RSS/pod: ours default / client-go default (<= 0.5)",
            _div(rss("kubeinformers"), rss("client-go")),
            0.5,
            "le",
        ),
        (
            "peak / after RSS during sync, ours default (<= 1.5)",
            _div(ours.get("peak_rss_over_baseline"), ours.get("rss_after_over_baseline")),
            1.5,
            "le",
        ),
        # Issue 26 retired the "eager <= 2x lazy" target for the read rows above.
        (
            'sync: decode="eager" / ours lazy default',
            _div(sync("kubeinformers-eager"), sync("kubeinformers")),
            None,
            "",
        ),
        ("lister get us (<= 1)", ours.get("lister_get_us"), 1.0, "le"),
        # Stretch (issue 16): the opt-in compact store, in KB as the RSS table shows.
        (
            "compact store RSS/pod KB (<= 1.5)",
            _div(rss("kubeinformers-compact"), 1024),
            1.5,
            "le",
        ),
        (
            "compact store lister get us (<= 50)",
            _get(med, "kubeinformers-compact", "lister_get_us"),
            50.0,
            "le",
        ),
        (
            "compact store RSS/pod / ours default",
            _div(rss("kubeinformers-compact"), rss("kubeinformers")),
            None,
            "",
        ),
        (
            "first full read us/pod: compact / ours default",
            _div(
                _get(med, "kubeinformers-compact", "materialise_us"),
                ours.get("materialise_us"),
            ),
            None,
            "",
        ),
        # The target is for 10,000 pods: a list scans every cached pod, so it scales with N.
        (
            f"label-selected list ms (<= {10 * n / 10_000:g})",
            ours.get("lister_selector_list_ms"),
            10.0 * n / 10_000,
            "le",
        ),
        (
            "import + first informer s (<= 0.5)",
            _get(r, "import", "import_and_first_informer_seconds"),
            0.5,
            "le",
        ),
    ]
    out = []
    for name, value, bound, how in targets:
        met = (
            ""
            if value is None or bound is None
            else ("yes" if (value <= bound if how == "le" else value >= bound) else "NO")
        )
        out.append({"target": name, "value": value, "bound": bound, "met": met})
    return out


__all__ = ["METHOD", "print_read_report", "print_report", "verdicts"]
