"""Every rule ID cited in the code, the tests and the docs is defined in docs/behaviour.md.

docs/behaviour.md is the contract the code cites (issue 14): a citation that does not resolve
there is either a typo or a rule that was never written down. Citations take four forms,
found by looking at how the code and tests actually cite rules:

* a rule ID in text: an upper-case section letter A-N, a number 1-99 and, for sub-sectioned
  rules, a dot and a number 1-99 (``(C3.4)``, ``# D14: ...``, ranges ``D6-D9``, ``C1.10/C2.6``).
  The letter must not follow a word character or a dot and the ID must not run into another
  word character, so ``E501``, ``B011``, ``F401`` (ruff codes: 3+ digits or a leading zero),
  ``RFC3339``, ``PY311``, ``K8s``, ``E2E``, ``HTTP/1.1``, ``v1`` and hex strings are not IDs;
* a rule of section 0 alone in parentheses or after "rule": ``(0.2)``, ``rule 0.2`` (not
  ``wait(0.2)``, ``(0.5 s)`` or ``(0.4, 0.35)``);
* a section or sub-section: ``section F``, ``C-2``;
* a test name: ``def test_c1_3_...`` cites C1.3 and ``def test_e3_l29_...`` cites E3 and L29;
  an ``x1_3`` pair reads as the dotted ID only when the document has sub-rules under ``X1``
  (so ``test_d11_429_...`` cites D11).

Definitions are the list items ``- **ID** — ...`` and the section headings (``## F.``,
``### C-2.``) of docs/behaviour.md.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

_REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
BEHAVIOUR = _REPO / "docs" / "behaviour.md"

# One pass over each file; the leading lookahead lets the engine skip most positions cheaply.
CITATION = re.compile(
    r"(?=[A-NSsdr(])(?:"
    # a rule ID in text (docstrings, comments, strings, Markdown)
    r"(?<![\w.])(?P<rule>[A-N][1-9][0-9]?(?:\.[1-9][0-9]?)?)(?!\w)"
    # a sub-section, "C-2"
    r"|(?<![\w-])(?P<sub_section>[A-N]-[1-9])(?![\w-])"
    # section 0's rules are plain decimals: only "(0.2)" and "rule 0.2" count
    r"|(?<=\s)\((?P<zero>0\.[1-9])\)"
    r"|\brules? (?P<zero_rule>0\.[1-9])\b"
    # a section, "section F"
    r"|\b[Ss]ections? (?P<section>[0A-N])(?![\w-])"
    # a test name, "def test_c1_3_..."
    r"|\bdef (?P<test>test_\w+)"
    r")"
)
_TEST_NAME_ID = re.compile(r"[a-n][1-9][0-9]?")

_NEWLINE = re.compile(r"\n")

DEFINITION = re.compile(r"^- \*\*([^*]+)\*\*")
SECTION_HEADING = re.compile(r"^#{2,3} ([0A-N](?:-[1-9])?)\. ")


class Citation(NamedTuple):
    path: Path
    line: int
    rule: str


def defined_ids(text: str) -> set[str]:
    """The rule IDs and section names docs/behaviour.md defines."""
    ids: set[str] = set()
    for line in text.splitlines():
        if m := DEFINITION.match(line) or SECTION_HEADING.match(line):
            ids.add(m.group(1))
    return ids


def _test_name_ids(name: str, sub_ruled: set[str]) -> Iterator[str]:
    parts = name.split("_")[1:]  # drop "test"
    i = 0
    while i < len(parts):
        part = parts[i]
        if _TEST_NAME_ID.fullmatch(part):
            rule = part.upper()
            nxt = parts[i + 1] if i + 1 < len(parts) else ""
            if rule in sub_ruled and re.fullmatch(r"[1-9][0-9]?", nxt):
                rule, i = f"{rule}.{nxt}", i + 1
            yield rule
        i += 1


def citations(path: Path, text: str, sub_ruled: set[str]) -> Iterator[Citation]:
    """The rule citations in one file, in order; test names count only in Python files."""
    line_starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    for m in CITATION.finditer(text):
        line = bisect.bisect_right(line_starts, m.start())
        kind = m.lastgroup
        if kind == "test":
            if path.suffix == ".py":
                for rule in _test_name_ids(m.group(kind), sub_ruled):
                    yield Citation(path, line, rule)
        elif kind is not None:
            yield Citation(path, line, m.group(kind))


def cited_files(repo: Path) -> Iterable[Path]:
    """Python under kubeinformers/ and tests/, the README and docs/*.md but the contract."""
    me = Path(__file__).resolve()
    for root in ("kubeinformers", "tests"):
        for path in sorted((repo / root).rglob("*.py")):
            if path.resolve() != me:  # this file shows non-citations on purpose
                yield path
    yield from (p for p in [repo / "README.md"] if p.is_file())
    yield from (p for p in sorted((repo / "docs").glob("*.md")) if p.name != BEHAVIOUR.name)


def undefined_citations(repo: Path, defined: set[str]) -> list[Citation]:
    sub_ruled = {rule.split(".")[0] for rule in defined if "." in rule and rule[0] != "0"}
    return [
        citation
        for path in cited_files(repo)
        for citation in citations(path, path.read_text(encoding="utf-8"), sub_ruled)
        if citation.rule not in defined
    ]


def test_every_cited_rule_id_is_defined_in_behaviour_md() -> None:
    defined = defined_ids(BEHAVIOUR.read_text(encoding="utf-8"))
    missing = undefined_citations(_REPO, defined)
    assert not missing, "rule IDs cited but not defined in docs/behaviour.md:\n" + "\n".join(
        f"  {c.path.relative_to(_REPO)}:{c.line}: {c.rule}" for c in missing
    )


def test_behaviour_md_defines_each_rule_once() -> None:
    lines = BEHAVIOUR.read_text(encoding="utf-8").splitlines()
    ids = [m.group(1) for line in lines if (m := DEFINITION.match(line))]
    assert len(ids) > 150  # the whole contract, not a fragment of it
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '"""Rules D6-D9 and D17\u2013D20 (C3.4), see C1.10/C2.6."""',
            ["D6", "D9", "D17", "D20", "C3.4", "C1.10", "C2.6"],
        ),
        ("# B15: unchanged when the object has no metadata.", ["B15"]),
        ("The gate (0.2): on unless set; rule 0.3 too.", ["0.2", "0.3"]),
        ("client-go-rules.md section I; the RealFIFO (C-2)", ["I", "C-2"]),
        ("x = 1  # noqa: E501, B011, F401, E731, B010", []),
        ("RFC3339, PY311, K8s, E2E, HTTP/1.1, v1, UTF-8, 0xE5F, sha 3f2504e0, wait(0.2)", []),
        ("renew deadline (0.5 s) exceeded; WEIGHTS = (0.4, 0.35, 0.25)", []),
    ],
)
def test_citation_forms_in_text(line: str, expected: list[str]) -> None:
    found = [c.rule for c in citations(Path("x.md"), line, {"C1", "C2", "C3"})]
    assert found == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_c1_3_dedup_keeps_older", ["C1.3"]),
        ("test_e3_l29_relist_with_changes", ["E3", "L29"]),
        ("test_d11_429_on_watch_request", ["D11"]),
        ("test_decoder_rejects_a_table_d9", ["D9"]),
        ("test_e2e_demo_v1_pods", []),
    ],
)
def test_citation_forms_in_test_names(name: str, expected: list[str]) -> None:
    found = [c.rule for c in citations(Path("x.py"), f"def {name}() -> None:", {"C1", "C2", "C3"})]
    assert found == expected


def test_an_undefined_citation_is_reported_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "kubeinformers").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "kubeinformers" / "mod.py").write_text('"""Fine (A1)."""\n# see B99\n')
    (tmp_path / "tests" / "test_mod.py").write_text("def test_c1_77_typo() -> None: ...\n")
    missing = undefined_citations(tmp_path, {"A1", "C1.3"})
    assert [(c.path.name, c.line, c.rule) for c in missing] == [
        ("mod.py", 2, "B99"),
        ("test_mod.py", 1, "C1.77"),
    ]
