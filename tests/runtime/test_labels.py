"""Label selectors, checked against the cases of apimachinery's pkg/labels/selector_test.go."""

from __future__ import annotations

import pytest

from kubeinformers.runtime import labels
from kubeinformers.runtime.labels.selector import Operator, Requirement, Selector

# --- TestSelectorParse: good strings re-print without their blanks --------------------------


@pytest.mark.parametrize(
    "text",
    ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"],
)
def test_good_selectors_round_trip_without_blanks(text: str) -> None:
    assert str(labels.parse(text)) == text.replace(" ", "")


@pytest.mark.parametrize(
    "text",
    [
        "x=a||y=b",
        "x==a==b",
        "!x=a",
        "x<a",
        "x,y in",
        ",x,y",
        "x nott in (y)",
        "a in (xyz),",
        "a in (xyz)b notin ()",
        "a in (xyz abc)",
        "a notin(",
        "a (",
        "(",
        "x=a,",
        "x in a",
        "x in (a",
        "=a",
        "x!",
        "x>",
        "x>1.5",
        "x>99999999999999999999",
    ],
)
def test_bad_selectors_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="invalid label selector"):
        labels.parse(text)


def test_parse_is_deterministic_requirements_sorted_by_key() -> None:
    assert str(labels.parse("x=a,a=x")) == str(labels.parse("a=x,x=a")) == "a=x,x=a"
    assert labels.parse("x=a,a=x") == labels.parse("a=x,x=a")
    assert hash(labels.parse("x=a,a=x")) == hash(labels.parse("a=x,x=a"))


# --- TestSelectorMatches --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "label_set"),
    [
        ("", {"x": "y"}),
        ("x=y", {"x": "y"}),
        ("x==y", {"x": "y"}),
        ("x=y,z=w", {"x": "y", "z": "w"}),
        ("x!=y,z!=w", {"x": "z", "z": "a"}),
        ("notin=in", {"notin": "in"}),
        ("x", {"x": "z"}),
        ("!x", {"y": "z"}),
        ("x>1", {"x": "2"}),
        ("x<1", {"x": "0"}),
        ("x<1", {"x": "-5"}),
        ("x!=y", {}),
        ("x notin (a)", {}),
        ("x in (a,b)", {"x": "b"}),
        ("x=", {"x": ""}),
        ("foo=bar", {"foo": "bar", "baz": "blah"}),
        ("baz=blah", {"foo": "bar", "baz": "blah"}),
        ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
        ("app=web,tier in (fe,be),!canary", {"app": "web", "tier": "be"}),
    ],
)
def test_selector_matches(selector: str, label_set: dict[str, str]) -> None:
    assert labels.parse(selector).matches(label_set)


@pytest.mark.parametrize(
    ("selector", "label_set"),
    [
        ("x=z", {}),
        ("x=y", {"x": "z"}),
        ("x=y,z=w", {"x": "w", "z": "w"}),
        ("x!=y,z!=w", {"x": "z", "z": "w"}),
        ("x", {"y": "z"}),
        ("!x", {"x": "z"}),
        ("x>1", {"x": "0"}),
        ("x<1", {"x": "2"}),
        ("x>1", {"x": "v2"}),
        ("x>1", {}),
        ("x in (a)", {}),
        ("x=", {}),
        ("foo=blah", {"foo": "bar", "baz": "blah"}),
        ("baz=bar", {"foo": "bar", "baz": "blah"}),
        ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
        ("app=web,tier in (fe,be),!canary", {"app": "web", "tier": "be", "canary": "1"}),
    ],
)
def test_selector_does_not_match(selector: str, label_set: dict[str, str]) -> None:
    assert not labels.parse(selector).matches(label_set)


def test_everything_matches_all_and_is_empty() -> None:
    assert labels.everything().matches({"x": "y"})
    assert labels.everything().matches({})
    assert labels.everything().empty()
    assert labels.parse("") is labels.everything()
    assert str(labels.everything()) == ""


def test_nothing_matches_nothing_and_is_not_empty() -> None:
    nothing = labels.nothing()
    assert not nothing.matches({})
    assert not nothing.matches({"x": "y"})
    assert not nothing.empty()
    assert nothing.matches_nothing
    assert not labels.everything().matches_nothing
    assert nothing != labels.everything()
    assert nothing.add(Requirement.new("x", Operator.EXISTS)) is nothing


# --- TestSetMatches / TestNilMapIsValid -----------------------------------------------------


@pytest.mark.parametrize(
    "label_set", [{}, {"foo": "bar"}, {"baz": "blah"}, {"foo": "bar", "baz": "blah"}]
)
def test_selector_from_set_matches_superset(label_set: dict[str, str]) -> None:
    assert Selector.from_set(label_set).matches({"foo": "bar", "baz": "blah"})


def test_selector_from_set_is_sorted_and_empty_set_is_everything() -> None:
    assert str(Selector.from_set({"z": "1", "a": "2"})) == "a=2,z=1"
    assert Selector.from_set({}).empty()
    assert not Selector.from_set({"a": "b"}).matches({"a": "c"})


def test_selector_from_set_validates_only_when_asked() -> None:
    assert str(Selector.from_set({"bad key": "v"})) == "bad key=v"
    with pytest.raises(ValueError, match="bad key"):
        Selector.from_set({"bad key": "v"}, validate=True)


def test_matches_treats_none_as_no_labels() -> None:
    assert labels.parse("!x").matches(None)
    assert not labels.parse("x").matches(None)


# --- TestSetSelectorParser: parse output ----------------------------------------------------


def _req(key: str, op: Operator, *values: str) -> Requirement:
    return Requirement.new(key, op, values)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\rx", [_req("x", Operator.EXISTS)]),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            [_req("this-is-a-dns.domain.com/key-with-dash", Operator.EXISTS)],
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            [_req("this-is-another-dns.domain.com/key-with-dash", Operator.IN, "so", "what")],
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            [_req("0.1.2.domain/99", Operator.NOT_IN, "10.10.100.1", "tick.tack.clock")],
        ),
        ("foo  in\t (abc)", [_req("foo", Operator.IN, "abc")]),
        ("x notin\n (abc)", [_req("x", Operator.NOT_IN, "abc")]),
        ("x  notin\t\t\t(abc,def)", [_req("x", Operator.NOT_IN, "abc", "def")]),
        ("x in (abc,def)", [_req("x", Operator.IN, "abc", "def")]),
        ("x in (abc,)", [_req("x", Operator.IN, "abc", "")]),
        ("x in ()", [_req("x", Operator.IN, "")]),
        (
            "x notin (abc,,def),bar,z in (),w",
            [
                _req("bar", Operator.EXISTS),
                _req("w", Operator.EXISTS),
                _req("x", Operator.NOT_IN, "abc", "", "def"),
                _req("z", Operator.IN, ""),
            ],
        ),
        ("x,y in (a)", [_req("x", Operator.EXISTS), _req("y", Operator.IN, "a")]),
        ("x=a", [_req("x", Operator.EQUALS, "a")]),
        ("x>1", [_req("x", Operator.GREATER_THAN, "1")]),
        ("x<7", [_req("x", Operator.LESS_THAN, "7")]),
        ("x=a,y!=b", [_req("x", Operator.EQUALS, "a"), _req("y", Operator.NOT_EQUALS, "b")]),
        (
            "x=a,y!=b,z in (h,i,j)",
            [
                _req("x", Operator.EQUALS, "a"),
                _req("y", Operator.NOT_EQUALS, "b"),
                _req("z", Operator.IN, "h", "i", "j"),
            ],
        ),
        ("x notin ( )", [_req("x", Operator.NOT_IN, "")]),
        ("x notin (, a)", [_req("x", Operator.NOT_IN, "", "a")]),
        ("a ", [_req("a", Operator.EXISTS)]),
        (
            "a in (x,y,notin, z,in)",
            [_req("a", Operator.IN, "in", "notin", "x", "y", "z")],
        ),
        ("x in (a,,b)", [_req("x", Operator.IN, "", "a", "b")]),
        ("in in (in)", [_req("in", Operator.IN, "in")]),
    ],
)
def test_parse_output(text: str, expected: list[Requirement]) -> None:
    assert list(labels.parse(text).requirements) == expected


# --- TestToString ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requirements", "text"),
    [
        (
            [
                _req("x", Operator.IN, "abc", "def"),
                _req("y", Operator.NOT_IN, "jkl"),
                _req("z", Operator.EXISTS),
            ],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            [
                _req("x", Operator.NOT_IN, "abc", "def"),
                _req("y", Operator.NOT_EQUALS, "jkl"),
                _req("z", Operator.DOES_NOT_EXIST),
            ],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            [
                _req("x", Operator.NOT_IN, "abc"),
                _req("y", Operator.IN, "jkl", "mno"),
                _req("z", Operator.NOT_IN, ""),
            ],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            [
                _req("x", Operator.EQUALS, "abc"),
                _req("y", Operator.DOUBLE_EQUALS, "jkl"),
                _req("z", Operator.NOT_EQUALS, "a"),
                _req("z", Operator.EXISTS),
            ],
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            [
                _req("x", Operator.GREATER_THAN, "2"),
                _req("y", Operator.LESS_THAN, "8"),
                _req("z", Operator.EXISTS),
            ],
            "x>2,y<8,z",
        ),
    ],
)
def test_canonical_string(requirements: list[Requirement], text: str) -> None:
    selector = Selector(requirements)
    assert str(selector) == text
    assert labels.parse(text) == selector


# --- TestRequirementConstructor -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "op", "values"),
    [
        ("x", Operator.IN, ["foo"]),
        ("x", Operator.NOT_IN, ["foo"]),
        ("x", Operator.EXISTS, []),
        ("x", Operator.DOES_NOT_EXIST, []),
        ("1foo", Operator.IN, ["bar"]),
        ("1234", Operator.IN, ["bar"]),
        ("y", Operator.GREATER_THAN, ["1"]),
        ("z", Operator.LESS_THAN, ["6"]),
        ("example.com/" + "a" * 63, Operator.EXISTS, []),
        ("x", Operator.EQUALS, ["a" * 63]),
        ("x", Operator.EQUALS, [""]),
    ],
)
def test_requirement_constructor_accepts(key: str, op: Operator, values: list[str]) -> None:
    assert Requirement.new(key, op, values).key == key


@pytest.mark.parametrize(
    ("key", "op", "values"),
    [
        ("x", Operator.IN, []),
        ("x", Operator.NOT_IN, []),
        ("foo", Operator.GREATER_THAN, ["bar"]),
        ("barz", Operator.LESS_THAN, ["blah"]),
        ("a" * 254, Operator.EXISTS, []),
        ("a" * 64, Operator.EXISTS, []),
        ("x", Operator.EXISTS, ["a"]),
        ("x", Operator.EQUALS, ["a", "b"]),
        ("x", Operator.EQUALS, ["a" * 64]),
        ("x", Operator.EQUALS, ["-a"]),
        ("-x", Operator.EXISTS, []),
        ("a/b/c", Operator.EXISTS, []),
        ("/x", Operator.EXISTS, []),
        ("x/", Operator.EXISTS, []),
        ("Example.com/x", Operator.EXISTS, []),
        ("a" * 254 + "/x", Operator.EXISTS, []),
    ],
)
def test_requirement_constructor_rejects(key: str, op: Operator, values: list[str]) -> None:
    with pytest.raises(ValueError, match="invalid label requirement"):
        Requirement.new(key, op, values)


# --- TestRequirementSelectorMatching --------------------------------------------------------


@pytest.mark.parametrize(
    ("label_set", "requirements", "match"),
    [
        (
            {"x": "foo", "y": "baz"},
            [_req("x", Operator.IN, "foo"), _req("y", Operator.NOT_IN, "alpha")],
            True,
        ),
        (
            {"x": "foo", "y": "baz"},
            [_req("x", Operator.IN, "foo"), _req("y", Operator.IN, "alpha")],
            False,
        ),
        ({"y": ""}, [_req("x", Operator.NOT_IN, ""), _req("y", Operator.EXISTS)], True),
        ({"y": ""}, [_req("x", Operator.DOES_NOT_EXIST), _req("y", Operator.EXISTS)], True),
        ({"y": ""}, [_req("x", Operator.NOT_IN, ""), _req("y", Operator.DOES_NOT_EXIST)], False),
        ({"y": "baz"}, [_req("x", Operator.IN, "")], False),
        ({"z": "2"}, [_req("z", Operator.GREATER_THAN, "1")], True),
        ({"z": "v2"}, [_req("z", Operator.GREATER_THAN, "1")], False),
    ],
)
def test_requirement_selector_matching(
    label_set: dict[str, str], requirements: list[Requirement], match: bool
) -> None:
    assert Selector(requirements).matches(label_set) is match


def test_add_returns_new_sorted_selector() -> None:
    base = Selector([_req("key", Operator.IN, "value")])
    added = base.add(_req("a", Operator.EQUALS, "b"))
    assert str(added) == "a=b,key in (value)"
    assert str(base) == "key in (value)"


def test_requires_exact_match() -> None:
    selector = labels.parse("a=1,b in (2),c in (3,4),d!=5")
    assert selector.requires_exact_match("a") == "1"
    assert selector.requires_exact_match("b") == "2"
    assert selector.requires_exact_match("c") is None
    assert selector.requires_exact_match("d") is None
    assert selector.requires_exact_match("e") is None


# --- errors name the position and what was expected ------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("x==a==b", 4, "expected: ',' or end of string"),
        ("!x=a", 2, "expected: ',' or end of string"),
        ("x in (a b)", 8, "expected: ',' or ')'"),
        ("a notin(", 8, "found end of string, expected: a label value, ',' or ')'"),
        ("(", 0, "expected: '!', a label key, or end of string"),
        ("a (", 2, "expected one of: in, notin, =, ==, !=, >, <"),
        ("x=a,", 4, "expected: '!' or a label key after ','"),
        ("x<a", 2, "expected: an integer after '<'"),
        ("x in a", 5, "expected: '('"),
        ("app=web,bad key=1", 12, "expected one of"),
        ("app=we$b", 4, "expected: a valid label value"),
        ("-app=web", 0, "expected: a valid label key"),
    ],
)
def test_syntax_error_names_position_and_expectation(
    text: str, position: int, expected: str
) -> None:
    with pytest.raises(ValueError) as info:
        labels.parse(text)
    message = str(info.value)
    assert f"at position {position}:" in message
    assert expected in message
    assert repr(text) in message


def test_to_selector_accepts_str_selector_and_none() -> None:
    selector = labels.parse("a=b")
    assert labels.to_selector(selector) is selector
    assert labels.to_selector("a=b") == selector
    assert labels.to_selector(None) is labels.everything()
    assert labels.to_selector("") is labels.everything()
    with pytest.raises(TypeError, match="label selector"):
        labels.to_selector(42)  # type: ignore[arg-type]


def test_requirement_values_are_deduplicated_and_sorted() -> None:
    assert labels.parse("x in (b,a,b)").requirements[0].values == ("a", "b")


def test_selector_fast_path_agrees_with_requirement_matches() -> None:
    """Selector.matches runs compiled per-requirement tests; they must equal Requirement.matches."""
    requirements = [
        _req("x", op, *values)
        for op, values in [
            (Operator.EXISTS, ()),
            (Operator.DOES_NOT_EXIST, ()),
            (Operator.EQUALS, ("a",)),
            (Operator.DOUBLE_EQUALS, ("",)),
            (Operator.NOT_EQUALS, ("a",)),
            (Operator.IN, ("a",)),
            (Operator.IN, ("", "a", "b")),
            (Operator.NOT_IN, ("",)),
            (Operator.NOT_IN, ("a", "b")),
            (Operator.GREATER_THAN, ("1",)),
            (Operator.LESS_THAN, ("1",)),
        ]
    ]
    label_sets: list[dict[str, str]] = [{}, {"y": "a"}] + [
        {"x": v} for v in ("", "a", "b", "c", "0", "2", "-3", "x1")
    ]
    for requirement in requirements:
        for label_set in label_sets:
            expected = requirement.matches(label_set)
            assert Selector([requirement]).matches(label_set) is expected, (
                str(requirement),
                label_set,
            )


def test_fused_selector_is_the_and_of_its_requirements() -> None:
    """The selector's one fused test equals all(Requirement.matches) for every pair."""
    ops = [
        (Operator.EXISTS, ()),
        (Operator.DOES_NOT_EXIST, ()),
        (Operator.EQUALS, ("a",)),
        (Operator.NOT_EQUALS, ("a",)),
        (Operator.IN, ("a", "b")),
        (Operator.NOT_IN, ("a", "b")),
        (Operator.GREATER_THAN, ("1",)),
    ]
    keys = ("example.com/x", "y")
    requirements = [_req(k, op, *values) for k in keys for op, values in ops]
    label_sets = [{}] + [
        {k: v for k, v in zip(keys, pair, strict=True) if v is not None}
        for pair in [("a", None), (None, "b"), ("a", "b"), ("2", "a"), ("b", "0"), ("c", "c")]
    ]
    for first in requirements:
        for second in requirements:
            selector = Selector([first, second])
            for label_set in label_sets:
                expected = first.matches(label_set) and second.matches(label_set)
                assert selector.matches(label_set) is expected, (str(selector), label_set)
                assert selector.matcher(label_set) is expected
    assert labels.nothing().matcher({}) is False and labels.everything().matcher({}) is True


def test_selectors_pickle_to_equal_working_selectors() -> None:
    import pickle

    for selector in (labels.parse("tier in (fe,be),app!=svc-1,!gone"), labels.nothing()):
        copy = pickle.loads(pickle.dumps(selector))
        assert copy == selector
        assert copy.matches({"tier": "fe"}) is selector.matches({"tier": "fe"})
