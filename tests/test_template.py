"""Tests for analyzer.core.template (the template compiler)."""

from __future__ import annotations

import dataclasses
import math
import string
import time
from types import SimpleNamespace

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.core.template import (
    RETRY_FACTOR,
    CompiledTemplate,
    Field,
    TemplateError,
    compile_template,
    parse_value,
)
from analyzer.core.template.fields import literal_parts

DEEPSEEK_TEMPLATE = (
    "DeepSeekV4 CP supports moe_a2a_backend in {supported_a2a_backends}, "
    "got {cfg.moe_a2a_backend!r}."
)
DEEPSEEK_MESSAGE = (
    "DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), "
    "got 'flashinfer_tkv'."
)
DEEPEP_TEMPLATE = (
    "DeepEP v2 MoE currently supports only --moe-runner-backend deep_gemm. "
    "Got {resolved_runner!r}. "
)
DEEPEP_MESSAGE = "DeepEP v2 MoE currently supports only --moe-runner-backend deep_gemm. Got 'triton'."


def render_fstring(template: str, **names: object) -> str:
    """Format ``template`` the way the source does: as an f-string."""
    return eval("f" + repr(template), {"__builtins__": {}}, names)


def canon(value: object) -> object:
    """Comparable form of a value that also pins container and scalar types."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [canon(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(canon(k), canon(v)) for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(repr(v) for v in value))
    return (type(value).__name__, value)


# ---------------------------------------------------------------------------
# the two real SGLang messages


def test_deepseek_cp_backend_message() -> None:
    ct = compile_template(DEEPSEEK_TEMPLATE)
    assert [f.name for f in ct.fields] == ["supported_a2a_backends", "moe_a2a_backend"]
    assert ct.fields[1] == Field("moe_a2a_backend", "cfg.moe_a2a_backend", "r", None, "fstring")
    got = ct.match(DEEPSEEK_MESSAGE)
    assert got == {
        "supported_a2a_backends": ("none", "deepep", "megamoe", "mori"),
        "moe_a2a_backend": "flashinfer_tkv",
    }
    assert type(got["supported_a2a_backends"]) is tuple


def test_deepep_runner_message_with_trailing_space_in_template() -> None:
    ct = compile_template(DEEPEP_TEMPLATE)
    assert ct.match(DEEPEP_MESSAGE) == {"resolved_runner": "triton"}
    # the same message with the concatenation's trailing space also matches
    assert ct.match(DEEPEP_MESSAGE + " ") == {"resolved_runner": "triton"}
    assert ct.match(DEEPEP_MESSAGE.replace("deep_gemm", "cutlass")) is None


def test_a_message_that_quotes_the_statement_after_words_beginning_as_it_does_gives_the_quoted_values() -> None:
    """torch's watchdog wraps the timeout it caught: `[Rank 6] NCCL watchdog thread terminated with exception: [Rank 6]
    Watchdog caught ...`. The timeout's template, which begins `[Rank {rank}] `, reads the statement it quotes, not a
    rank of all the words up to it; a message that is the statement alone, or whose field holds no such opening, as before."""
    ct = compile_template("[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq_num}, "
                          "OpType={op_type}) ran for {ran_ms} milliseconds before timing out.", "format")
    said = "[Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=880, OpType=BROADCAST) ran for 1800902 milliseconds before timing out."
    values = {"rank": 6, "seq_num": 880, "op_type": "BROADCAST", "ran_ms": 1800902}
    assert ct.match(said) == values
    assert ct.match(f"[Rank 6] NCCL watchdog thread terminated with exception: {said}") == values
    assert compile_template("[{group}] failed: {reason}").match("[a [b] c] failed: x") == {"group": "a [b] c", "reason": "x"}


def test_a_message_with_thousands_of_the_templates_opening_is_read_again_a_few_times(monkeypatch) -> None:
    """Openings of the statement that cannot begin it (inside a later field) are tried from the last a few times,
    not each (every try reads the rest of the message: thousands would take quadratic time)."""
    ct = compile_template("[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(OpType={op_type}) "
                          "ran for {ran_ms} milliseconds before timing out.", "format")
    tries: list[int] = []
    real = CompiledTemplate._match
    monkeypatch.setattr(CompiledTemplate, "_match", lambda self, *args: tries.append(1) or real(self, *args))
    message = ("[Rank [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=" + "[Rank " * 10_000
               + ") ran for 5 milliseconds before timing out.")
    assert ct.match(message)["rank"] == "[Rank 1"  # (no later opening begins the statement)
    assert len(tries) <= 10


# ---------------------------------------------------------------------------
# syntaxes: (template, style, message, expected values)

SYNTAX_CASES = [
    # brace fields, conversions
    ("got {x}", "auto", "got abc", {"x": "abc"}),
    ("got {x!r}", "auto", "got 'abc'", {"x": "abc"}),
    ("got {x!s}", "auto", "got 'abc'", {"x": "'abc'"}),
    ("got {x!a}", "auto", "got '\\xe9t\\xe9'", {"x": "été"}),
    ("got {x!r:>10}|", "auto", "got      'abc'|", {"x": "abc"}),
    # numeric format specs
    ("n={x:d}", "auto", "n=-42", {"x": -42}),
    ("n={x:,d}", "auto", "n=1,234,567", {"x": 1234567}),
    ("n={x:_d}", "auto", "n=1_000", {"x": 1000}),
    ("n={x:05d}", "auto", "n=00042", {"x": 42}),
    ("n={x:+d}", "auto", "n=+5", {"x": 5}),
    ("n={x: d}", "auto", "n= 5", {"x": 5}),
    ("n={x:,}", "auto", "n=1,234", {"x": 1234}),
    ("f={x:f}", "auto", "f=2.500000", {"x": 2.5}),
    ("f={x:.2f}", "auto", "f=-3.14", {"x": -3.14}),
    ("f={x:,.2f}", "auto", "f=1,234.50", {"x": 1234.5}),
    ("f={x:e}", "auto", "f=1.500000e+03", {"x": 1500.0}),
    ("f={x:g}", "auto", "f=1e-05", {"x": 1e-05}),
    ("p={x:.1%}", "auto", "p=12.5%", {"x": 0.125}),
    ("h={x:x}", "auto", "h=ff", {"x": 255}),
    ("h={x:#X}", "auto", "h=0XFF", {"x": 255}),
    ("o={x:#o}", "auto", "o=0o17", {"x": 15}),
    ("b={x:b}", "auto", "b=101", {"x": 5}),
    # padding / alignment
    ("[{x:>8}]", "auto", "[     abc]", {"x": "abc"}),
    ("[{x:<8}]", "auto", "[abc     ]", {"x": "abc"}),
    ("[{x:*^9}]", "auto", "[***abc***]", {"x": "abc"}),
    # nested fields in the spec: generic, must not crash
    ("[{x:{width}}]", "auto", "[   abc]", {"x": "abc"}),
    ("v={x:{w}.{p}f}", "auto", "v=3.14", {"x": 3.14}),
    # custom __format__ spec stays opaque text
    ("day {dt:%Y-%m-%d}", "auto", "day 2024-01-02", {"dt": "2024-01-02"}),
    # positional and keyword str.format fields
    ("{}, {}", "format", "a, b", {"arg0": "a", "arg1": "b"}),
    ("{0} and {1}", "format", "a and b", {"arg0": "a", "arg1": "b"}),
    ("{0} and {0}", "format", "a and a", {"arg0": "a", "arg0_2": "a"}),
    ("{name} is {0}", "format", "x is 1", {"name": "x", "arg0": 1}),
    # f-string self-documenting fields
    ("bad {x=}", "fstring", "bad x=5", {"x": 5}),
    ("bad {x = }", "fstring", "bad x = 'a'", {"x": "a"}),
    ("bad {x=:.1f}", "fstring", "bad x=2.5", {"x": 2.5}),
    # percent style
    ("%s", "percent", "hello world", {"arg0": "hello world"}),
    ("%d/%i", "percent", "-3/7", {"arg0": -3, "arg1": 7}),
    ("%f", "percent", "0.500000", {"arg0": 0.5}),
    ("%.2f", "percent", "3.14", {"arg0": 3.14}),
    ("%05.1f", "percent", "003.5", {"arg0": 3.5}),
    ("%r", "percent", "['a', 1]", {"arg0": ["a", 1]}),
    ("%a", "percent", "'\\xe9'", {"arg0": "é"}),
    ("%x|%#x|%X", "percent", "ff|0xff|FF", {"arg0": 255, "arg1": 255, "arg2": 255}),
    ("%o", "percent", "17", {"arg0": 15}),
    ("%e", "percent", "1.500000e+03", {"arg0": 1500.0}),
    ("%c!", "percent", "A!", {"arg0": "A"}),
    ("%5d|", "percent", "   42|", {"arg0": 42}),
    ("%-5s|", "percent", "ab   |", {"arg0": "ab"}),
    ("%d%% done", "percent", "50% done", {"arg0": 50}),
    ("%(name)s=%(value)d", "percent", "tp=8", {"name": "tp", "value": 8}),
    # auto detects percent directives only without brace fields
    ("%d%% done", "auto", "50% done", {"arg0": 50}),
    ("%s: %r", "auto", "x: None", {"arg0": "x", "arg1": None}),
    ("50% of {x}", "auto", "50% of 8", {"x": 8}),
    ("%s {x}", "auto", "%s abc", {"x": "abc"}),
]


@pytest.mark.parametrize(("template", "style", "message", "expected"), SYNTAX_CASES)
def test_syntax(template: str, style: str, message: str, expected: dict) -> None:
    ct = compile_template(template, style)
    got = ct.match(message)
    assert got == expected
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


# ---------------------------------------------------------------------------
# Field metadata: (template, style, expected fields)

FIELD_CASES = [
    ("{cfg.x!r:>10}", "auto", [Field("x", "cfg.x", "r", ">10", "fstring")]),
    ("{x:.2f} {y!s}", "fstring", [Field("x", "x", None, ".2f", "fstring"), Field("y", "y", "s", None, "fstring")]),
    ("{} {0}", "auto", [Field("arg0", "", None, None, "format"), Field("arg0_2", "0", None, None, "format")]),
    ("{x:{width}}", "format", [Field("x", "x", None, "{width}", "format")]),
    ("{x:}", "fstring", [Field("x", "x", None, None, "fstring")]),
    ("{x=}", "fstring", [Field("x", "x", "r", None, "fstring")]),
    ("{a != b}", "fstring", [Field("a_b", "a != b", None, None, "fstring")]),
    ("{d['k:v']}", "fstring", [Field("d", "d['k:v']", None, None, "fstring")]),
    (
        "%s %-10r %.3f %(key)05d",
        "auto",
        [
            Field("arg0", "", "s", None, "percent"),
            Field("arg1", "", "r", "-10", "percent"),
            Field("arg2", "", None, ".3f", "percent"),
            Field("key", "key", None, "05d", "percent"),
        ],
    ),
]


@pytest.mark.parametrize(("template", "style", "fields"), FIELD_CASES)
def test_fields(template: str, style: str, fields: list[Field]) -> None:
    assert list(compile_template(template, style).fields) == fields


# ---------------------------------------------------------------------------
# capture naming

NAMING_CASES = [
    ("{cfg.moe_a2a_backend}", ["moe_a2a_backend"]),
    ("{self.server_args.tp_size}", ["tp_size"]),
    ("{x[0]}", ["x"]),
    ("{x.shape[0]}", ["shape"]),
    ('{d["key"]}', ["d"]),
    ("{len(items)}", ["len_items"]),
    ("{len(self.items)}", ["len_items"]),
    ("{foo()}", ["foo"]),
    ("{foo()[0]}", ["foo"]),
    ("{obj.get(k, 1)}", ["get_k_1"]),
    ("{type(e).__name__}", ["name"]),
    ("{_private}", ["private"]),
    ("{a + b}", ["a_b"]),
    ("{x * 2}", ["x_2"]),
    ("{1 + 2}", ["v1_2"]),
    ("{-x}", ["x"]),
    ("{'!!'}", ["value"]),
    ("{} {}", ["arg0", "arg1"]),
    ("{0} {1}", ["arg0", "arg1"]),
    ("{1} {0}", ["arg1", "arg0"]),
    ("{0.name} {0[1]}", ["name", "arg0"]),
    ("%s %r %d", ["arg0", "arg1", "arg2"]),
    ("%(name)s %(my-key)s", ["name", "my_key"]),
    ("{x} {x} {x!r}", ["x", "x_2", "x_3"]),
    ("{a.size} {b.size}", ["size", "size_2"]),
    ("{size_2} {a.size} {b.size}", ["size_2", "size", "size_3"]),
]


@pytest.mark.parametrize(("template", "names"), NAMING_CASES)
def test_naming(template: str, names: list[str]) -> None:
    ct = compile_template(template)
    assert [f.name for f in ct.fields] == names
    assert set(names) <= set(ct.pattern.groupindex)


def test_repeated_expression_gets_independent_groups() -> None:
    # no backreference: both occurrences are captured on their own
    ct = compile_template("{x} then {x}")
    assert ct.match("a then b") == {"x": "a", "x_2": "b"}


# ---------------------------------------------------------------------------
# escapes, whitespace, anchoring


@pytest.mark.parametrize(
    ("template", "style", "message", "expected"),
    [
        ("{{literal}} {x}", "auto", "{literal} 5", {"x": 5}),
        ("a }} b {x}", "fstring", "a } b c", {"x": "c"}),
        ("{{{x}}}", "fstring", "{abc}", {"x": "abc"}),
        ("100%% of %s", "percent", "100% of x", {"arg0": "x"}),
        ("(a+b)*[c]? {x}$", "auto", "(a+b)*[c]? 1$", {"x": 1}),
        # auto: no field anywhere -> the text is taken verbatim
        ("{{literal}} %s", "auto", "{{literal}} hi", {"arg0": "hi"}),
        ("100%", "auto", "100%", {}),
        ("loaded 50% done", "auto", "loaded 50% done", {}),
        ("value { x", "auto", "value { x", {}),
        ("a } b {x", "auto", "a } b {x", {}),
    ],
)
def test_escapes_and_literal_fallback(template: str, style: str, message: str, expected: dict) -> None:
    assert compile_template(template, style).match(message) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("expected 1 got 2", {"a": 1, "b": 2}),
        ("expected   1\n\tgot\n2", {"a": 1, "b": 2}),
        ("   expected 1 got 2  \n", {"a": 1, "b": 2}),
        ("expected multi\nline got 2", {"a": "multi\nline", "b": 2}),
        ("expected1 got 2", None),  # template whitespace needs some whitespace
        ("expected 1 got 2 and more", {"a": 1, "b": "2 and more"}),
    ],
)
def test_whitespace_tolerance(message: str, expected: dict | None) -> None:
    ct = compile_template("  expected {a}  got {b}\n")
    assert ct.match(message) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (DEEPSEEK_TEMPLATE, "Error: " + DEEPSEEK_MESSAGE),
        (DEEPSEEK_TEMPLATE, DEEPSEEK_MESSAGE + " (see docs)"),
        ("got {x!r}.", "got 'a'. extra"),
        ("boom", "boom boom"),
        ("boom", "kaboom"),
        ("n={x:d}", "n=12a"),
        ("h={x:x}", "h=fg"),
        ("p={x:.1%}", "p=12.5"),
        ("%d items", "many items"),
        ("{x} failed", "failed"),  # fields are never empty
    ],
)
def test_anchored_no_match(template: str, message: str) -> None:
    assert compile_template(template).match(message) is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("CUDA error: no kernel image is available", {"error": "no kernel image is available"}),
        ("CUDA error: misaligned address\nCUDA kernel errors might be asynchronously reported",
         {"error": "misaligned address", "advice": "CUDA kernel errors might be asynchronously reported"}),
        ("CUDA error: misaligned address  \n  For debugging", {"error": "misaligned address", "advice": "For debugging"}),
    ],
)
def test_a_template_line_break_is_a_line_break_and_the_lines_after_it_may_be_missing(message, expected) -> None:
    """A message cut after its first line (a bare exception line) still matches, its later fields unset;
    a blank inside a line is never where the template's next line begins (`error='no'`)."""
    assert compile_template("CUDA error: {error}\n{advice}").match(message) == expected


@pytest.mark.parametrize(
    ("template", "message", "expected"),
    [
        ("a {x} b\n  more {y} here\nlast", "a 1 b\nmore 2 here", {"x": 1, "y": 2}),
        ("a {x} b\n  more {y} here\nlast", "a 1 b more 2 here last", None),  # lines run together
        ("x\n\nError: {e}", "x", {}),
        ("x\n\nError: {e}", "x\n\nError: 5", {"e": 5}),
        ("{x}\nfoo", "anything", None),  # a first line of only a field does not stand alone
        ("{x}\nfoo", "anything\nfoo", {"x": "anything"}),
    ],
)
def test_which_lines_a_multiline_template_needs(template, message, expected) -> None:
    assert compile_template(template).match(message) == expected


def test_template_without_fields_matches_to_empty_dict() -> None:
    ct = compile_template("CUDA out of memory.")
    assert ct.fields == ()
    assert ct.match("CUDA  out of\nmemory. ") == {}
    assert ct.match("CUDA out of memory") is None


# ---------------------------------------------------------------------------
# typed values


@pytest.mark.parametrize(
    ("captured", "expected"),
    [
        ("[1, 2]", [1, 2]),
        ("('a', 'b')", ("a", "b")),
        ("{'a': 1}", {"a": 1}),
        ("{1, 2}", {1, 2}),
        ("()", ()),
        ("42", 42),
        ("-1.5e3", -1500.0),
        ("'quoted'", "'quoted'"),  # generic fields keep their quotes
        ("None", "None"),
        ("True", "True"),
        ("(see docs)", "(see docs)"),
        ("[1, 2", "[1, 2"),
        ("007", "007"),
        ("2024_01", "2024_01"),
        ("0x1f", "0x1f"),
        ("Foo(a=1)", "Foo(a=1)"),
    ],
)
def test_generic_field_values(captured: str, expected: object) -> None:
    got = compile_template("val={x};").match(f"val={captured};")
    assert got is not None
    assert canon(got["x"]) == canon(expected)


@pytest.mark.parametrize(
    ("captured", "expected"),
    [
        ("None", None),
        ("True", True),
        ("False", False),
        ("-3", -3),
        ("1e-05", 1e-05),
        ("b'ab'", b"ab"),
        ('"it\'s"', "it's"),
        ("'a\\nb'", "a\nb"),
        ("(1, ('x)', [2, {3: None}]))", (1, ("x)", [2, {3: None}]))),
        ("<Foo object at 0x7f00>", "<Foo object at 0x7f00>"),
        ("<function <lambda> at 0x7f00>", "<function <lambda> at 0x7f00>"),
        ("Foo(a=1, b='), x')", "Foo(a=1, b='), x')"),
        ("torch.float16", "torch.float16"),
        ("-inf", -math.inf),
    ],
)
def test_repr_field_values(captured: str, expected: object) -> None:
    got = compile_template("val={x!r};").match(f"val={captured};")
    assert got is not None
    assert canon(got["x"]) == canon(expected)


@pytest.mark.parametrize(
    ("template", "message", "expected"),
    [
        # the repr parser picks the boundary, not the first ", then "
        ("{a!r}, then {b!r}", "'x, then y', then 2", {"a": "x, then y", "b": 2}),
        ("{a!r}, then {b!r}", "('a', ', then '), then [1]", {"a": ("a", ", then "), "b": [1]}),
        ("{a!r}{b!r}", "1.5'x'", {"a": 1.5, "b": "x"}),
        ("{a!r} and {b!r}", "<A <B> C> and None", {"a": "<A <B> C>", "b": None}),
    ],
)
def test_repr_boundaries(template: str, message: str, expected: dict) -> None:
    assert compile_template(template).match(message) == expected


PARSE_VALUE_CASES = [
    ("'a'", "a"),
    ('"b"', "b"),
    ("b'x'", b"x"),
    ("r'\\d'", "\\d"),
    ("42", 42),
    ("-1.5", -1.5),
    ("1e3", 1000.0),
    ("1_000", 1000),
    ("None", None),
    ("True", True),
    ("(1, 'a')", (1, "a")),
    ("[1, [2]]", [1, [2]]),
    ("{'k': (1,)}", {"k": (1,)}),
    ("{1, 2}", {1, 2}),
    ("  7 ", 7),
    ("abc", "abc"),
    ("(see docs)", "(see docs)"),
    ("Foo(1)", "Foo(1)"),
    ("'unterminated", "'unterminated"),
    ("f'{x}'", "f'{x}'"),
    ("007", "007"),
    ("", ""),
    ("1 + 2", "1 + 2"),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_VALUE_CASES)
def test_parse_value(text: str, expected: object) -> None:
    assert canon(parse_value(text)) == canon(expected)


# ---------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    ("template", "style", "column", "words"),
    [
        ("value { x", "fstring", 7, "never closed"),
        ("value { x", "format", 7, "never closed"),
        ("a } b", "format", 3, "single '}'"),
        ("{x!z}", "fstring", 3, "conversion"),
        ("{x:", "fstring", 1, "never closed"),
        ("{f(x}", "fstring", 5, "unmatched"),
        ("{'abc}", "fstring", 2, "string"),
        ("rate %q", "percent", 6, "'%'"),
        ("done 100%", "percent", 9, "'%'"),
    ],
)
def test_template_errors(template: str, style: str, column: int, words: str) -> None:
    with pytest.raises(TemplateError) as info:
        compile_template(template, style)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.column == column
    assert f"column {column}" in str(err)
    assert words in str(err)
    # auto style never raises: it falls back to literal text
    assert compile_template(template).match(template) == {}


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="style"):
        compile_template("x", "printf")
    with pytest.raises(TypeError):
        compile_template(b"x")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# literal, prefix, literal_tokens

LITERAL_CASES = [
    (
        DEEPSEEK_TEMPLATE,
        "DeepSeekV4 CP supports moe_a2a_backend in , got .",
        "DeepSeekV4 CP supports moe_a2a_backend in ",
        ("deepseekv4", "supports", "moe_a2a_backend", "got"),
    ),
    (
        DEEPEP_TEMPLATE,
        "DeepEP v2 MoE currently supports only --moe-runner-backend deep_gemm. Got .",
        "DeepEP v2 MoE currently supports only --moe-runner-backend deep_gemm. Got ",
        ("deepep", "moe", "currently", "supports", "only", "--moe-runner-backend", "deep_gemm", "got"),
    ),
    ("{x} failed", "failed", "", ("failed",)),
    ("  no fields \n  here ", "no fields here", "no fields here", ("fields", "here")),
    # words glued to a field are not whole message words; duplicates dropped
    ("rank{rank}/world {size}: rank failed", "rank/world : rank failed", "rank", ("world", "rank", "failed")),
    ("{{x}} = {x}", "{x} =", "{x} = ", ()),
    ("%d%% of %s used", "% of used", "", ("used",)),
    ("bad {x=}!", "bad x=!", "bad x=", ("bad",)),
    ("--- {x} ---", "--- ---", "--- ", ()),
]


@pytest.mark.parametrize(("template", "literal", "prefix", "tokens"), LITERAL_CASES)
def test_literal_prefix_tokens(template: str, literal: str, prefix: str, tokens: tuple) -> None:
    ct = compile_template(template)
    assert ct.literal == literal
    assert ct.prefix == prefix
    assert ct.literal_tokens == tokens


# ---------------------------------------------------------------------------
# pathological backtracking is cut off by the timeout


def test_adjacent_generic_fields_compile_and_match() -> None:
    ct = compile_template("{a}{b}{c}{d}{e}{f}{g}{h}!")
    assert ct.match("abcdefgh!") == {k: k for k in "abcdefgh"}


def test_hostile_message_times_out_instead_of_hanging() -> None:
    ct = compile_template("{a}{b}{c}{d}{e}{f}{g}{h}!")
    hostile = "x" * 3000 + "!y"
    start = time.perf_counter()
    assert ct.match(hostile, timeout=0.05) is None
    assert time.perf_counter() - start < 2.0
    # it is the timeout that ended it, not a quick failure
    with pytest.raises(TimeoutError):
        ct.pattern.match(hostile, timeout=0.05)


class _Stalled:
    """A compiled pattern whose first tries time out, as a sound one may on a machine too busy to run it in time."""

    def __init__(self, pattern: regex.Pattern, stalls: int) -> None:
        self.pattern, self.stalls, self.timeouts = pattern, stalls, []

    def match(self, message: str, timeout: float):
        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.stalls:
            raise TimeoutError("regex timed out")
        return self.pattern.match(message)


@pytest.mark.parametrize("stalls, found", [(1, {"code": -9}), (2, None)])
def test_a_template_stalled_once_is_tried_again_with_a_longer_limit(stalls, found) -> None:
    """The limit is wall-clock time: a template stalled once by a busy machine is tried again, ten times longer
    (a notice line was missed so under a loaded test run), and given up after that."""
    ct = compile_template("Child process unexpectedly failed with exitcode={code}.")
    stalled = _Stalled(ct.pattern, stalls)
    assert dataclasses.replace(ct, pattern=stalled).match("Child process unexpectedly failed with exitcode=-9.",
                                                          timeout=0.05) == found
    assert stalled.timeouts == [0.05, 0.05 * RETRY_FACTOR]
    with pytest.raises(TimeoutError):  # (a caller that retries itself hears of the first)
        dataclasses.replace(ct, pattern=_Stalled(ct.pattern, 1)).match("x", raise_timeout=True)


# ---------------------------------------------------------------------------
# API shape


def test_public_api_is_frozen_and_slotted() -> None:
    ct = compile_template("got {x!r}")
    assert isinstance(ct, CompiledTemplate)
    for obj, attr in ((ct, "template"), (ct.fields[0], "name")):
        assert not hasattr(obj, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, "y")
    assert ct.pattern.match("got 1") is not None  # anchored at both ends on its own
    assert ct.pattern.search("xx got 1") is None


# ---------------------------------------------------------------------------
# round trips: messages generated by Python's own formatting

_HASHABLE = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.binary(max_size=10),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_HASHABLE, inner, max_size=3),
        st.sets(st.integers(), min_size=1, max_size=4),
    ),
    max_leaves=5,
)
_WORD = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters),
    st.text(alphabet=string.ascii_letters + string.digits + "_-", max_size=11),
)
_PHRASE = st.lists(_WORD, min_size=1, max_size=4).map(" ".join)
_FINITE = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@settings(derandomize=True, max_examples=200, deadline=None, database=None)
@given(backends=st.lists(_WORD, min_size=1, max_size=5).map(tuple), a=_VALUES, b=_VALUES)
def test_roundtrip_fstrings(backends: tuple, a: object, b: object) -> None:
    message = render_fstring(
        DEEPSEEK_TEMPLATE,
        supported_a2a_backends=backends,
        cfg=SimpleNamespace(moe_a2a_backend=a),
    )
    got = compile_template(DEEPSEEK_TEMPLATE).match(message)
    assert got is not None
    assert canon(got["supported_a2a_backends"]) == canon(backends)
    assert canon(got["moe_a2a_backend"]) == canon(a)

    template = "expected {a!r} and {obj.b!r}; aborting"
    message = render_fstring(template, a=a, obj=SimpleNamespace(b=b))
    got = compile_template(template).match(message)
    assert got is not None
    assert canon(got["a"]) == canon(a)
    assert canon(got["b"]) == canon(b)


_PRINTABLE = st.text(
    alphabet=string.ascii_letters + string.digits + " .:;!?_-/=<>", min_size=1, max_size=30
).filter(lambda s: s == s.strip() and parse_value(s) == s and not s[0].isdigit())


@settings(derandomize=True, max_examples=200, deadline=None, database=None)
@given(
    count=st.integers(),
    name=_PHRASE,
    total=st.integers(min_value=-(10**12), max_value=10**12),
    ratio=_FINITE,
    addr=st.integers(min_value=0, max_value=2**64),
    pct=st.floats(min_value=0, max_value=10, allow_nan=False),
    label=_WORD,
    items=st.lists(st.integers(), max_size=5),
    reason=_PRINTABLE,
)
def test_roundtrip_format_and_percent(
    count: int,
    name: str,
    total: int,
    ratio: float,
    addr: int,
    pct: float,
    label: str,
    items: list,
    reason: str,
) -> None:
    # str.format with specs
    template = (
        "{0} items in {name}: total={total:,d} ratio={ratio:.3f} addr={addr:#x} "
        "use={pct:.1%} [{label:>14}] {items}"
    )
    values = dict(name=name, total=total, ratio=ratio, addr=addr, pct=pct, label=label, items=items)
    got = compile_template(template).match(template.format(count, **values))
    assert got is not None
    assert got["arg0"] == count and type(got["arg0"]) is int
    assert got["name"] == name
    assert got["total"] == total
    assert got["ratio"] == float(f"{ratio:.3f}")
    assert got["addr"] == addr
    assert got["pct"] == pytest.approx(float(f"{pct * 100:.1f}") / 100, abs=1e-12)
    assert got["label"] == label
    assert got["items"] == items

    # positional percent directives
    template = "%s failed at rank %d (%i%%), loss=%.4f, state=%r, code=%x: %s"
    message = template % (name, count, total, ratio, items, addr, reason)
    got = compile_template(template).match(message)
    assert got == {
        "arg0": name,
        "arg1": count,
        "arg2": total,
        "arg3": float("%.4f" % ratio),  # noqa: UP031 - as the source formats it
        "arg4": items,
        "arg5": addr,
        "arg6": reason,
    }

    # mapping percent directives
    template = "Weight %(key)r has size %(size)5d and norm %(frac)e"
    message = template % {"key": label, "size": total, "frac": ratio}
    got = compile_template(template, "percent").match(message)
    assert got == {"key": label, "size": total, "frac": float("%e" % ratio)}  # noqa: UP031 - as the source formats it


# ---------------------------------------------------------------------------
# literal text and words (what the matcher indexes), from the same field parser

WORD = regex.compile(r"[a-z0-9_][a-z0-9_-]{2,}")  # the matcher's word


@pytest.mark.parametrize("template, style, message", [
    ("{name}_block_cnt must be positive, got {n}", "auto", "kv_block_cnt must be positive, got 0"),
    ("expected tensors{context} to be contiguous", "auto", "expected tensorsA to be contiguous"),
    ("got a {len(shape)}-tuple for --shape", "auto", "got a 3-tuple for --shape"),
    ("chunked_prefill_size % index_kpool must be zero", "plain", "chunked_prefill_size % index_kpool must be zero"),
    ("rank %d of %s failed", "auto", "rank 3 of node-7 failed"),
])
def test_every_indexed_word_is_a_whole_word_of_a_matching_message(template, style, message):
    assert compile_template(template, style).match(message) is not None
    _, words = literal_parts(template, WORD, style)
    assert words and words <= set(WORD.findall(message.lower()))


def test_a_plain_template_has_no_fields():
    plain = compile_template("chunked_prefill_size % index_kpool != 0 for {x}", "plain")
    assert plain.fields == () and plain.match("chunked_prefill_size % index_kpool != 0 for {x}") == {}
    assert plain.match("chunked_prefill_size % index_kpool != 0 for 3") is None
