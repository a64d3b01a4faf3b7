"""`kubeinformers generate` (also `python -m kubeinformers.generator`): argument parsing,
progress on stderr, exit codes scripts can rely on, and the pipeline load → schema →
models → render → write.
"""

from __future__ import annotations

import argparse
import importlib
import keyword
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# render (jinja2) is imported where it is used: without the generator extra, --help still
# works and a run fails with one line naming the extra (EXTRA_MODULES).
from kubeinformers.generator import cluster as cluster_input
from kubeinformers.generator import (
    layout,
    load,
    merge_keys,
    naming,
    protobuf_table,
    schema,
    shapes,
    stamp,
    write,
)
from kubeinformers.generator.load import APIModel, LoadError
from kubeinformers.generator.models import ModelError, default_jobs, generate_models

EXIT_OK = 0
EXIT_INPUT_FAILED = 1
EXIT_FATAL = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C

# What `pip install 'kubeinformers[generator]'` adds (pyproject.toml's generator extra).
EXTRA_MODULES = {
    "jinja2": "jinja2",
    "black": "black",
    "datamodel_code_generator": "datamodel-code-generator",
}


def missing_extra() -> list[str]:
    """The generator extra's distributions that cannot be imported here."""
    missing = []
    for module, dist in EXTRA_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(dist)
    return missing


def missing_extra_message(missing: Sequence[str]) -> str:
    return (
        f"kubeinformers generate needs the generator extra ({', '.join(missing)} not "
        "installed): pip install 'kubeinformers[generator]'"
    )


DESCRIPTION = """\
Generate typed pydantic models, informers, listers and a factory from Kubernetes OpenAPI
specs and CustomResourceDefinitions.

examples:
  kubeinformers generate --openapi ../shared/data/openapi/v3 \\
      --out kubeinformers/generated --package kubeinformers.generated
  kubeinformers generate --crd crds/ --out myapp/informers --package myapp.informers
  kubeinformers generate --cluster --group apps --group example.com --out gen
  kubeinformers generate --crd deploy/bundle.yaml --crd crds/ --prefer crds/ --out gen

--crd takes CRD files, folders of them, or install bundles (Helm or kustomize output):
documents that are no CustomResourceDefinition are skipped with one note per path, and a
`kind: List` of objects is read item by item. A CRD defined identically in several files is
read once; defined differently, it is an error naming the files unless --prefer picks one.

--cluster reads the cluster KUBECONFIG (or ~/.kube/config) names, else the in-cluster
service account: every group-version document of /openapi/v3 plus every CRD.

Without --package the package name is derived from --out: the folder's path relative to
the current directory when every part is a Python identifier (gen/informers → gen.informers),
else the folder's own name; the package must be importable under that name.

With built-in API input (--openapi or --cluster) the package gets SharedInformerFactory;
with CRDs only it gets CustomInformers(factory), which shares kubeinformers.generated's
runtime factory and ObjectMeta. Either is in <package>.informers; a CRD kind is imported from
its own module (<package>.<group>.<version>.<kind module>), so that a type checker reading it
reads no other kind.

A run whose inputs, options and generator are those of the last run into --out, and which
finds --out's generated files as that run wrote them, writes nothing (--force regenerates).
"""

EPILOG = """\
exit codes:
  0  everything generated (or, with --check, the output is up to date)
  1  some inputs failed: each error names the file, the document index and the path in the
     schema; with --keep-going the rest was generated (nothing when every input failed),
     without it nothing was written; with --check: the output differs from what would be
     generated
  2  usage error, or a fatal error (unreadable output folder, generator failure)
  130  interrupted (Ctrl-C): every file is as it was or as generated; run again
"""


@dataclass
class Result:
    errors: list[LoadError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    outcome: write.Outcome | None = None
    timings: dict[str, float] = field(default_factory=dict)


def _progress_to_stderr(message: str) -> None:
    print(f"kubeinformers: {message}", file=sys.stderr, flush=True)


def _quiet(message: str) -> None:
    return None


def collect(
    openapi: Sequence[Path] = (),
    crds: Sequence[Path] = (),
    cluster: bool = False,
    *,
    groups: Sequence[str] = (),
    prefer: Sequence[Path] = (),
    jobs: int = 1,
) -> APIModel:
    """Step 1 over every input: load, pick one definition per CRD, keep the chosen groups.
    A big folder of CRDs is read by `jobs` worker processes.

    Raises `cluster_input.ClusterConfigError` when --cluster has no cluster to read.
    """
    model = APIModel()
    chosen = sorted({"" if g in cluster_input.CORE_GROUP_NAMES else g for g in groups})
    if cluster:
        model.extend(cluster_input.load_cluster(chosen or None))
    for path in openapi:
        if not path.exists():
            model.errors.append(
                LoadError(str(path), None, "", "no such file or folder; check the --openapi path")
            )
            continue
        model.extend(load.load_openapi(path))
    for path in crds:
        model.extend(load.load_crds(path, jobs))
    load.resolve_duplicates(model, prefer)
    if chosen:
        model.select_groups(chosen)
        if not model.resources and not model.errors:
            model.errors.append(
                LoadError(
                    ", ".join(str(p) for p in (*openapi, *crds)) or "--cluster",
                    None,
                    "",
                    f"--group {' '.join(g or 'core' for g in chosen)}: no resource of these "
                    "groups in the inputs",
                )
            )
    return model


def derive_package(out: Path, cwd: Path | None = None) -> str | None:
    """The import name for `out`: its dotted path below `cwd` when every part is an
    identifier (`examples/informers` → `examples.informers`), else the folder's own name;
    None when even that is no identifier."""
    cwd = (cwd or Path.cwd()).resolve()
    target = (cwd / out).resolve()
    parts: tuple[str, ...] = (target.name,)
    if target.is_relative_to(cwd) and target != cwd:
        below = target.relative_to(cwd).parts
        if all(_identifier(p) for p in below):
            parts = below
    return ".".join(parts) if all(_identifier(p) for p in parts) else None


def _identifier(part: str) -> bool:
    return part.isidentifier() and not keyword.iskeyword(part)


def build(
    model: APIModel,
    package: str,
    *,
    keep_going: bool = False,
    progress: Callable[[str], None] = _quiet,
    builtin: bool | None = None,
    jobs: int | None = None,
) -> Result:
    """Steps 2-3 plus formatting: `{relative path: formatted source}` for the whole package.

    Raises nothing for bad inputs: they are in `Result.errors`. Without `keep_going` any
    error leaves `files` empty.
    """
    result = Result(errors=list(model.errors), notes=list(model.notes))
    if result.errors and not keep_going:
        return result
    if builtin is None:
        builtin = bool(model.documents)
    t = time.perf_counter()
    groups: set[str] = {r.group for r in model.resources}
    for doc in model.documents:
        for body in doc.schemas.values():
            if isinstance(body, dict):
                for gvk in body.get("x-kubernetes-group-version-kind") or []:
                    if isinstance(gvk, dict) and isinstance(gvk.get("group"), str):
                        groups.add(gvk["group"])
    names = naming.group_names(groups)
    result.notes.extend(names.collisions)
    prep = schema.prepare(model, names.names)
    result.errors.extend(prep.errors)
    result.notes.extend(prep.notes)
    result.timings["schema"] = time.perf_counter() - t
    resources = [r for r in model.resources if r.source not in prep.left_out]
    if result.errors and not keep_going:
        return result
    progress(f"pre-processed {len(prep.schemas)} schemas; generating models")
    t = time.perf_counter()
    # CRD models import the built-in ObjectMeta when this run does not generate it.
    meta_external = schema.OBJECT_META not in prep.schemas
    model_files, rejected = generate_models(
        prep, object_meta_external=meta_external, jobs=jobs, progress=progress
    )
    result.errors.extend(rejected)
    result.timings["models"] = time.perf_counter() - t
    if result.errors and (not keep_going or not model_files):
        return result  # with --keep-going too: when every input failed, nothing is written
    t = time.perf_counter()
    pb_kinds: dict[tuple[str, str, str], str] = {}
    pb_source = ""
    if builtin:
        served = [(r.group, r.version, r.kind) for r in resources if r.lists_and_watches]
        pb_schema = protobuf_table.load()
        pb_source = protobuf_table.module_source(pb_schema, served)
        pb_kinds = {gvk: pb_schema.kinds[gvk] for gvk in served if gvk in pb_schema.kinds}
    from kubeinformers.generator import render

    other = render.render(
        resources,
        prep.kinds,
        model_files,
        names.names,
        package,
        builtin,
        protobuf_kinds=pb_kinds,
        protobuf_module=f"{package}.{protobuf_table.MODULE}",
        notes=result.notes,
        subresource_kinds=model.subresource_kinds,
    )
    from kubeinformers.generator.apply import generate_apply

    other.update(generate_apply(prep.schemas, prep.kinds, resources, model_files, package))
    builtin_shapes = shapes.builtin_shapes(prep.schemas)
    if builtin_shapes:
        other[f"{shapes.MODULE}.py"] = shapes.module_source(builtin_shapes)
    if builtin:
        other[f"{protobuf_table.MODULE}.py"] = pb_source
        keyed, keyed_kinds = merge_keys.merge_keys(prep.schemas, prep.kinds, resources)
        other[f"{merge_keys.MODULE}.py"] = merge_keys.module_source(keyed, keyed_kinds)
    result.timings["render"] = time.perf_counter() - t
    progress(f"rendered {len(other)} accessor, informer and lister files; formatting")
    t = time.perf_counter()
    # Model modules come formatted (by datamodel-code-generator, or laid out as it would by
    # `crd_models`), rendered files laid out as black would by construction (see `layout`);
    # black formats only what has a long line.
    preformatted = (
        frozenset(model_files)
        | {f"{shapes.MODULE}.py", f"{protobuf_table.MODULE}.py", f"{merge_keys.MODULE}.py"}
        | {path for path, code in other.items() if layout.fits(code)}
    )
    result.files = write.format_all(
        {**model_files, **other},
        preformatted,
        jobs=default_jobs() if jobs is None else jobs,
    )
    # PEP 561's marker (H34): without it mypy treats the package as untyped
    # (`import-untyped`, every class `Any`) wherever it is imported from an installed
    # distribution or a sys.path entry rather than the checked project's own folders.
    result.files[write.TYPED_MARKER] = ""
    result.timings["format"] = time.perf_counter() - t
    return result


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kubeinformers generate",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--openapi",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="a Swagger 2.0 swagger.json, one OpenAPI v3 document, or a folder of v3 documents "
        "(repeatable)",
    )
    p.add_argument(
        "--crd",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="a CRD YAML file, a folder of them, or an install bundle (multi-document; repeatable)",
    )
    p.add_argument(
        "--cluster",
        action="store_true",
        help="read /openapi/v3 and the CRDs of the cluster KUBECONFIG (or ~/.kube/config, "
        "or the in-cluster service account) points at; implies --keep-going (a server's "
        "document you cannot edit must not stop the other groups)",
    )
    p.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="GROUP",
        help="generate only this API group (repeatable; `core` is the legacy group of "
        "pods, services, ...); with --cluster only its documents are fetched",
    )
    p.add_argument(
        "--prefer",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="when a CRD is defined differently in several files, use the one in this file "
        "or folder (repeatable; an earlier --prefer wins over a later one)",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--package",
        metavar="NAME",
        help="the output folder's import name, e.g. myapp.informers (default: derived from "
        "--out, see above)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="generate what can be generated when some inputs are bad (exit code 1)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the output folder differs from what would be generated",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes for reading, generating and formatting big inputs (default: CPUs, "
        "at most 4)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="generate even when the inputs, options and generator are those of the last run "
        "into --out and its files are as that run wrote them (by default such a run does "
        "nothing)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "generate":
        args_list = args_list[1:]
    elif args_list and not args_list[0].startswith("-"):
        print(
            f"kubeinformers: unknown command {args_list[0]!r}; use `kubeinformers generate`",
            file=sys.stderr,
        )
        return EXIT_FATAL
    parser = _parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:
        if e.code == 0:  # --help: printed; say what a run would still need
            missing = missing_extra()
            if missing:
                print(f"note: {missing_extra_message(missing)}", file=sys.stderr)
            return EXIT_OK
        return EXIT_FATAL
    missing = missing_extra()
    if missing:
        print(missing_extra_message(missing), file=sys.stderr)
        return EXIT_FATAL
    if not (args.openapi or args.crd or args.cluster):
        parser.print_usage(sys.stderr)
        print(
            "kubeinformers generate: give at least one of --openapi, --crd, --cluster",
            file=sys.stderr,
        )
        return EXIT_FATAL
    progress = _quiet if args.quiet else _progress_to_stderr
    if args.out.exists() and not args.out.is_dir():
        print(
            f"kubeinformers generate: --out {args.out} is a file, not a folder; give a "
            "folder (it is created when missing)",
            file=sys.stderr,
        )
        return EXIT_FATAL
    if args.package is None:
        args.package = derive_package(args.out)
        if args.package is None:
            print(
                f"kubeinformers generate: cannot derive a package name from --out {args.out} "
                f"({args.out.resolve().name!r} is not a Python identifier); give --package "
                "NAME (with make: PACKAGE=NAME)",
                file=sys.stderr,
            )
            return EXIT_FATAL
        progress(
            f"package {args.package} (derived from --out; it must be importable under this "
            "name, else give --package)"
        )
    if not all(_identifier(part) for part in args.package.split(".")):
        print(
            f"kubeinformers generate: --package {args.package!r} is not a dotted Python name",
            file=sys.stderr,
        )
        return EXIT_FATAL
    top = args.package.split(".")[0]
    if top in sys.stdlib_module_names:
        # `import gc.informers` finds the built-in gc module; a package named `json` at the
        # top of sys.path hides the standard library's json from every import (H31).
        print(
            f"kubeinformers generate: --package {args.package}: {top!r} is a module of "
            f"Python's standard library, so `import {args.package}` would not find this "
            "package or would hide that module from every program beside it; choose "
            f"another name (--package, or --out {top}_informers)",
            file=sys.stderr,
        )
        return EXIT_FATAL
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        return _run_args(args, progress)
    except KeyboardInterrupt:
        # Ctrl-C is the user's own stop, not a failure to explain with a traceback (H30).
        print(
            f"kubeinformers generate: interrupted; every file in {args.out} is as it was or as "
            "generated, none partly written; run again to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED


def _run_args(args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    return run(
        openapi=args.openapi,
        crds=args.crd,
        cluster=args.cluster,
        out=args.out,
        package=args.package,
        # A live cluster's documents cannot be fixed by the user: one that conflicts (an
        # aggregated API built on older types) is left out and the other groups are written.
        keep_going=args.keep_going or args.cluster,
        check=args.check,
        progress=progress,
        jobs=args.jobs,
        groups=args.group,
        prefer=args.prefer,
        force=args.force,
    )


def _list_files(
    what: str, rels: Sequence[str], out: Path, progress: Callable[[str], None], limit: int = 20
) -> None:
    """One line per file (H20, H22), at most `limit`, then how many more."""
    for rel in rels[:limit]:
        progress(f"{what}: {out / rel}")
    if len(rels) > limit:
        progress(f"{what}: ... and {len(rels) - limit} more")


def run(
    *,
    openapi: Sequence[Path],
    crds: Sequence[Path],
    cluster: bool,
    out: Path,
    package: str,
    keep_going: bool = False,
    check: bool = False,
    progress: Callable[[str], None] = _progress_to_stderr,
    jobs: int | None = None,
    groups: Sequence[str] = (),
    prefer: Sequence[Path] = (),
    force: bool = False,
) -> int:
    """The whole command; returns the exit code."""
    started = time.perf_counter()
    digest = None
    if not cluster:
        digest = stamp.input_digest(
            openapi=openapi,
            crds=crds,
            package=package,
            keep_going=keep_going,
            groups=groups,
            prefer=prefer,
        )
    if digest is not None and not force and stamp.up_to_date(out, digest):
        progress(
            f"{out} is up to date: the inputs, options and generator are those of the last "
            f"run, whose files are unchanged; nothing written ({time.perf_counter() - started:.1f}s"
            ", --force regenerates)"
        )
        return EXIT_OK
    try:
        model = collect(
            openapi,
            crds,
            cluster,
            groups=groups,
            prefer=prefer,
            jobs=default_jobs() if jobs is None else jobs,
        )
    except cluster_input.ClusterConfigError as e:
        print(f"kubeinformers generate: --cluster: {e}", file=sys.stderr)
        return EXIT_FATAL
    except Exception as e:
        print(f"kubeinformers generate: cannot read the inputs: {e}", file=sys.stderr)
        return EXIT_FATAL
    progress(
        f"loaded {len(model.documents)} OpenAPI documents, {len(model.crds)} CRD versions, "
        f"{len(model.resources)} resources in {time.perf_counter() - started:.1f}s"
    )
    try:
        result = build(model, package, keep_going=keep_going, progress=progress, jobs=jobs)
    except (ModelError, ValueError) as e:
        print(f"kubeinformers generate: {e}", file=sys.stderr)
        return EXIT_FATAL
    progress(
        "timings: "
        + ", ".join(f"{step} {seconds:.1f}s" for step, seconds in result.timings.items())
    )
    for note in result.notes:
        progress(f"note: {note}")
    for error in result.errors:
        print(f"error: {error}", file=sys.stderr)
    if result.errors and not keep_going:
        print(
            f"kubeinformers generate: {len(result.errors)} input error(s); nothing written "
            "(--keep-going generates the rest)",
            file=sys.stderr,
        )
        return EXIT_INPUT_FAILED
    if result.errors and not result.files:
        print(
            f"kubeinformers generate: {len(result.errors)} input error(s) and nothing left to "
            "generate; nothing written",
            file=sys.stderr,
        )
        return EXIT_INPUT_FAILED
    try:
        outcome = write.write_tree(out, result.files, check=check, keep_stale=bool(result.errors))
    except write.WriteError as e:
        print(
            f"kubeinformers generate: cannot write {e}; {out} may be partial (every file "
            "written is whole; run again once the cause is fixed)",
            file=sys.stderr,
        )
        return EXIT_FATAL
    except OSError as e:
        print(f"kubeinformers generate: cannot write {out}: {e}", file=sys.stderr)
        return EXIT_FATAL
    elapsed = time.perf_counter() - started
    if check:
        for rel in outcome.differing:
            print(f"differs: {out / rel}", file=sys.stderr)
        if outcome.differing:
            progress(f"{len(outcome.differing)} file(s) out of date in {out}")
            return EXIT_INPUT_FAILED
        progress(f"{out} is up to date ({len(outcome.unchanged)} files, {elapsed:.1f}s)")
        return EXIT_INPUT_FAILED if result.errors else EXIT_OK
    progress(
        f"wrote {len(outcome.written)}, kept {len(outcome.unchanged)} unchanged, removed "
        f"{len(outcome.removed)} stale file(s) in {out} ({elapsed:.1f}s)"
    )
    _list_files("removed", outcome.removed, out, progress)
    if outcome.kept:
        progress(
            f"kept {len(outcome.kept)} generated file(s) this run did not produce, as some "
            "inputs failed (their kinds may still be in the input); a run without errors "
            "removes those no longer generated"
        )
        _list_files("kept", outcome.kept, out, progress)
    if digest is not None and not result.errors:
        stamp.record(out, digest)
    if result.errors:
        progress(f"{len(result.errors)} input(s) failed; the rest was generated")
        return EXIT_INPUT_FAILED
    return EXIT_OK
