"""Record go-to-protobuf's `generated.proto` files that tests/generator/test_protobuf_schema.py
compares the committed protobuf schema with (maintainers' tool; the recording is committed).

Only what the comparison reads is kept: the `package` line, `message X {` lines, field lines
and closing braces (no comments, options or imports), so the recording is small.

    python -m tools.record_generated_proto --api DIR --apimachinery DIR --tag v0.36.3

DIR is a git clone (or mirror) of k8s.io/api or k8s.io/apimachinery holding the tag.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "generator" / "fixtures" / "generated-proto"
# (module, package folder): the sample the test compares (about 470 messages at v0.36).
SAMPLE = (
    ("api", "core/v1"),
    ("api", "apps/v1"),
    ("api", "autoscaling/v2"),
    ("api", "batch/v1"),
    ("api", "certificates/v1"),
    ("api", "coordination/v1"),
    ("api", "events/v1"),
    ("api", "networking/v1"),
    ("api", "resource/v1"),
    ("api", "admissionregistration/v1alpha1"),
    ("apimachinery", "pkg/apis/meta/v1"),
)
_KEEP = re.compile(
    r"^\s*(?!option\s)(package\s|message\s|}|(optional|repeated)\s|map<|[\w.]+\s+\w+\s*=)"
)


def recorded_path(module: str, folder: str) -> Path:
    return OUT / module / folder / "generated.proto"


def strip(text: str) -> str:
    return "".join(line + "\n" for line in text.splitlines() if _KEEP.match(line))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.record_generated_proto")
    parser.add_argument("--api", type=Path, required=True, metavar="DIR")
    parser.add_argument("--apimachinery", type=Path, required=True, metavar="DIR")
    parser.add_argument("--tag", required=True, help="e.g. v0.36.3 (the committed schema's)")
    args = parser.parse_args(argv)
    repos = {"api": args.api, "apimachinery": args.apimachinery}
    for module, folder in SAMPLE:
        text = subprocess.run(
            ["git", "-C", str(repos[module]), "show", f"{args.tag}:{folder}/generated.proto"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        out = recorded_path(module, folder)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"// k8s.io/{module} {args.tag} {folder}/generated.proto\n" + strip(text))
    print(f"record_generated_proto: {len(SAMPLE)} files -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
