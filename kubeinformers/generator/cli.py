"""`kubeinformers generate` (also `python -m kubeinformers.generator`): argument parsing,
progress on stderr, exit codes scripts can rely on, and the pipeline load → schema →
models → render → write.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kubeinformers.generator import load, naming, render, schema, shapes, write
from kubeinformers.generator.load import APIModel, LoadError
from kubeinformers.generator.models import ModelError, generate_models

EXIT_OK = 0
EXIT_INPUT_FAILED = 1
EXIT_FATAL = 2

DESCRIPTION = """\
Generate typed pydantic models, informers, listers and a factory from Kubernetes OpenAPI
specs and CustomResourceDefinitions.

examples:
  kubeinformers generate --openapi ../shared/data/openapi/v3 \\
      --out kubeinformers/generated --package kubeinformers.generated
  kubeinformers generate --crd crds/ --out myapp/informers --package myapp.informers
  kubeinformers generate --cluster --crd extra.yaml --out gen --package gen

With built-in API input (--openapi or --cluster) the package gets SharedInformerFactory;
with CRDs only it gets CustomInformers(factory), which shares kubeinformers.generated's
runtime factory and ObjectMeta.
"""

EPILOG = """\
exit codes:
  0  everything generated (or, with --check, the output is up to date)
  1  some inputs failed: each error names the file, the document index and the path in the
     schema; with --keep-going the rest was generated, without it nothing was written;
     with --check: the output differs from what would be generated
  2  usage error, or a fatal error (unreadable output folder, generator failure)
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
) -> APIModel:
    """Step 1 over every input."""
    model = APIModel()
    if cluster:
        model.extend(load.load_cluster())
    for path in openapi:
        if not path.exists():
            model.errors.append(LoadError(str(path), None, "", "no such file or folder"))
            continue
        model.extend(load.load_openapi(path))
    for path in crds:
        model.extend(load.load_crds(path))
    return model


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
    result = Result(errors=list(model.errors))
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
    if result.errors and not keep_going:
        return result
    t = time.perf_counter()
    other = render.render(model.resources, prep.kinds, model_files, names.names, package, builtin)
    builtin_shapes = shapes.builtin_shapes(prep.schemas)
    if builtin_shapes:
        other[f"{shapes.MODULE}.py"] = shapes.module_source(builtin_shapes)
    result.timings["render"] = time.perf_counter() - t
    progress(f"rendered {len(other)} accessor, informer and lister files; formatting")
    t = time.perf_counter()
    preformatted = frozenset(model_files) | {f"{shapes.MODULE}.py"}
    result.files = write.format_all({**model_files, **other}, preformatted)
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
        help="a CRD YAML file or a folder of them, multi-document (repeatable)",
    )
    p.add_argument(
        "--cluster",
        action="store_true",
        help="read /openapi/v3 and the CRDs of the cluster KUBECONFIG points at",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--package",
        required=True,
        metavar="NAME",
        help="the output folder's import name, e.g. myapp.informers",
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
        help="worker processes for model generation of big inputs (default: CPUs, at most 4)",
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
        return EXIT_OK if e.code == 0 else EXIT_FATAL
    if not (args.openapi or args.crd or args.cluster):
        parser.print_usage(sys.stderr)
        print(
            "kubeinformers generate: give at least one of --openapi, --crd, --cluster",
            file=sys.stderr,
        )
        return EXIT_FATAL
    if not all(part.isidentifier() for part in args.package.split(".")):
        print(
            f"kubeinformers generate: --package {args.package!r} is not a dotted Python name",
            file=sys.stderr,
        )
        return EXIT_FATAL
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    progress = _quiet if args.quiet else _progress_to_stderr
    return run(
        openapi=args.openapi,
        crds=args.crd,
        cluster=args.cluster,
        out=args.out,
        package=args.package,
        keep_going=args.keep_going,
        check=args.check,
        progress=progress,
        jobs=args.jobs,
    )


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
) -> int:
    """The whole command; returns the exit code."""
    started = time.perf_counter()
    try:
        model = collect(openapi, crds, cluster)
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
    try:
        outcome = write.write_tree(out, result.files, check=check)
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
    if result.errors:
        progress(f"{len(result.errors)} input(s) failed; the rest was generated")
        return EXIT_INPUT_FAILED
    return EXIT_OK
