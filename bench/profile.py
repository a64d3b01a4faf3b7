"""Where a client process spends its time on the real server: `python -m bench.profile`.

Runs one bench child (every thread: reflector, list helper, handler) under py-spy's sampler
and sums the samples by what the code does: TLS reads, HTTP framing, gzip, line splitting,
decoding, the queue, the indexer, the handler hand-over. py-spy (`pip install py-spy`) is
needed; it is a profiling tool, not a dependency. The server is a RealApiServer loaded as in
`make bench`, or an existing one given with --kubeconfig and --from-rv.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.servers import NAMESPACE, RealBenchServer

MODES = {
    # mode: (bench.child contender, watch-list gate, needs the old resourceVersion)
    "watch-list": ("kubeinformers", True, False),
    "list-watch": ("kubeinformers", False, False),
    "eager": ("kubeinformers-eager", True, False),
    "replay": ("kubeinformers-replay", True, True),
    "watch": ("kubeinformers-watch", True, True),
}

# Leaf first: the first frame (from the leaf up) matching a rule names the sample's cost.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("gzip inflate", r"^(decompress|_decode|flush) \(.*urllib3/response\.py"),
        ("TLS read (ssl)", r"\(.*/ssl\.py:"),
        ("socket read", r"\(.*/socket\.py:"),
        ("HTTP framing (urllib3, http.client)", r"\((.*/urllib3/|.*/http/client\.py)"),
        ("watch line/frame splitting", r"\(.*runtime/client/framing\.py"),
        ("watch line splitting", r"^(__iter__|_chunks) \(.*runtime/client/transport\.py"),
        (
            "decode: pydantic validation (eager / on access)",
            r"\(.*(pydantic|runtime/codec/wire\.py)",
        ),
        ("decode: identity + lazy objects", r"\(.*runtime/codec/lazy(_decoder)?\.py"),
        ("decode: protobuf (identity, envelope, transcode)", r"\(.*runtime/codec/protobuf/"),
        ("queue (DeltaFIFO / RealFIFO)", r"\(.*runtime/cache/(delta_fifo|real_fifo)\.py"),
        ("indexer / keys", r"\(.*runtime/(cache/(store|keys|listers)|labels/\w+)\.py"),
        ("handler hand-over (processor)", r"\(.*runtime/cache/(processor|handlers)\.py"),
        ("informer / controller", r"\(.*runtime/cache/(informer|controller)\.py"),
        ("reflector / watch handler", r"\(.*runtime/(reflector/\w+|client/pager)\.py"),
        ("transport (requests)", r"\(.*runtime/client/transport\.py"),
        ("threading / locks", r"\(.*/threading\.py"),
        ("bench harness", r"\(.*bench/"),
    )
)


def classify(stack: list[str]) -> str:
    for frame in reversed(stack):
        for name, pattern in _RULES:
            if pattern.search(frame):
                return name
    return "other (imports, interpreter)"


def _measured(stack_text: str) -> bool:
    """The measured window only: the informer's threads, or the decode-only watch's loop;
    not the child's imports, set-up and memory measurement on its main thread."""
    if "main (bench/child.py" not in stack_text:
        return True
    return "measured_watch (bench/child.py" in stack_text


def summarise(raw: Path, top: int = 15) -> str:
    """Samples by cost category and by leaf function, with percentages of all samples."""
    by_category: Counter[str] = Counter()
    by_leaf: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack_text, _, count_text = line.rpartition(" ")
        if not stack_text or not count_text.isdigit():
            continue
        count = int(count_text)
        stack = [f for f in stack_text.split(";") if not f.startswith(("process ", "thread "))]
        if not stack or not _measured(stack_text):
            continue
        total += count
        by_category[classify(stack)] += count
        by_leaf[re.sub(r":\d+\)$", ")", stack[-1])] += count
    lines = [f"{total} samples holding the GIL in the measured threads"]
    for name, count in by_category.most_common():
        lines.append(f"  {100 * count / total:5.1f}%  {name}")
    lines.append("  top leaf functions:")
    for name, count in by_leaf.most_common(top):
        lines.append(f"  {100 * count / total:5.1f}%  {name}")
    return "\n".join(lines)


def profile(
    mode: str, kubeconfig: str, n: int, from_rv: str, out: Path, rate: int
) -> subprocess.CompletedProcess[str]:
    child, watch_list, needs_rv = MODES[mode]
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    # --gil: only the thread holding the GIL is sampled, i.e. where Python's time goes (a
    # thread waiting on a socket, a lock or the GIL is not); --threads names each thread.
    cmd = [py_spy, "record", "--format", "raw", "--rate", str(rate), "--threads", "--gil"]
    cmd += ["--output", str(out), "--", sys.executable, "-m", "bench.child", child]
    cmd += ["--kubeconfig", kubeconfig, "--n", str(n), "--namespace", NAMESPACE]
    if needs_rv:
        cmd += ["--from-rv", from_rv]
    env = dict(os.environ)
    env.pop("KUBE_FEATURE_WatchListClient", None)
    if not watch_list:
        env["KUBE_FEATURE_WatchListClient"] = "false"
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("modes", nargs="*", default=["watch-list", "list-watch", "replay"])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--rate", type=int, default=500, help="samples per second")
    parser.add_argument("--kubeconfig", help="an existing server holding the pods")
    parser.add_argument("--from-rv", default="", help="with --kubeconfig: the replay's start")
    parser.add_argument("--keep", type=Path, help="directory to keep the raw profiles in")
    args = parser.parse_args(argv)
    unknown = set(args.modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}; choose from {sorted(MODES)}")
    server = None
    try:
        if args.kubeconfig:
            kubeconfig, from_rv = args.kubeconfig, args.from_rv
        else:
            server = RealBenchServer()
            server.load_pods(args.pods)
            from_rv = server.buffer_updates(args.events, args.pods)
            kubeconfig = server.kubeconfig
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.keep or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            for mode in args.modes:
                n = args.events if MODES[mode][2] else args.pods
                raw = folder / f"{mode}.txt"
                done = profile(mode, kubeconfig, n, from_rv, raw, args.rate)
                print(f"== {mode}: {done.stdout.strip().splitlines()[-1]}")
                print(summarise(raw))
    finally:
        if server is not None:
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
