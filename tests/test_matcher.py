"""The matcher's steps on real raised exceptions (exact, raise site, fuzzy, possible, unknown), each
weighing what the traceback says: the package it runs through, the file, function and line."""

from __future__ import annotations

import pytest

from analyzer.core.evidence import Evidence
from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.records import ErrorInfo, package_relative
from analyzer.core.scan import events_from_lines
from analyzer.core.schema import Pattern, PatternSource
from fixtures.generate import Frame, formatted
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES

SITE = PatternSource(project="demo", path="demo/launch.py", line=40, function="Launcher.check_ports")


def _at(path: str, line: int, function: str) -> PatternSource:
    return PatternSource(project="demo", path=path, line=line, function=function)


PATTERNS = [
    Pattern(id="demo.port-in-use", exception="ValueError",
            template="port {port:d} is already in use by {owner!r}; pick another with --port", source=SITE),
    Pattern(id="demo.bare-assert", exception="AssertionError", template="",
            source=_at("demo/launch.py", 52, "Launcher.check_tp"), assert_expr="tp_size <= num_gpus"),
    Pattern(id="demo.generic", exception="ValueError", template="{message}"),
    Pattern(id="demo.tp-divides", exception="ValueError",
            template="tensor parallel size {tp} must divide the number of attention heads ({heads})",
            source=_at("demo/model.py", 10, "check_heads")),
    Pattern(id="demo.dtype", exception="ValueError", template="Unsupported dtype: {dtype}",
            source=_at("demo/quant.py", 30, "pick_kernel")),
    Pattern(id="demo.image-limit", exception="ValueError", template="Too many image inputs: {n} > {limit}",
            source=_at("demo/mm.py", 70, "check_limits")),
    Pattern(id="demo.audio-limit", exception="ValueError", template="Too many audio inputs: {n} > {limit}",
            source=_at("demo/mm.py", 74, "check_limits")),
    Pattern(id="demo.twin-load", exception="RuntimeError", template="weights of {name} are missing from the checkpoint",
            source=_at("demo/loader.py", 100, "load_dense")),
    Pattern(id="demo.twin-load-moe", exception="RuntimeError",
            template="weights of {name} are missing from the checkpoint",
            source=_at("demo/loader.py", 160, "load_moe")),
    Pattern(id="demo.blocks", exception="ValueError",
            template="{name}_block_cnt must be a positive multiple of the page size, got {n}",
            source=_at("demo/cache.py", 12, "size_pool")),
    Pattern(id="demo.modulo", exception="ValueError", template="chunked_prefill_size % page_size must be zero",
            style="plain", source=_at("demo/cache.py", 20, "size_pool")),
    Pattern(id="demo.logged", exception="log.error", template="Scheduler hit an exception while decoding batches",
            source=_at("demo/scheduler.py", 5, "event_loop")),
    Pattern(id="demo.no-device", exception="RuntimeError", template="Failed to infer device type",
            source=_at("demo/config.py", 90, "infer_device")),
    Pattern(id="demo.getattr", exception="AttributeError", template="{!r} object has no attribute {!r}",
            source=_at("demo/utils.py", 7, "Proxy.__getattr__")),
    Pattern(id="demo.quant-a", exception="ValueError", template="The input size is not aligned with the quantized weight shape.",
            source=_at("demo/quant/awq.py", 40, "AWQMethod.create_weights")),
    Pattern(id="demo.quant-b", exception="ValueError", template="The input size is not aligned with the quantized weight shape.",
            source=_at("demo/quant/gptq.py", 52, "GPTQMethod.create_weights")),
    Pattern(id="demo.args-old", exception="ValueError", template="Global server args is not set yet!",
            source=_at("demo/server_args.py", 700, "get_global_server_args")),
    Pattern(id="demo.args-new", exception="ValueError", template="Global server args is not set yet!",
            source=_at("demo/runtime_context.py", 80, "get_global_server_args")),
    Pattern(id="demo.linear-assert", exception="AssertionError", template="",
            source=_at("demo/gen/layers/linear.py", 88, "weight_loader"), assert_expr="param.shape == loaded.shape"),
]

LAUNCH = [Frame("demo/cli.py", 12, "main", "    launcher.start()")]
FOREIGN = [Frame("/home/me/train.py", 8, "<module>", "    run()"),
           Frame("/opt/venv/lib/python3.11/site-packages/otherlib/ops.py", 30, "pick_kernel", "    raise ValueError(")]


def traced(frames: list[Frame], exc: BaseException) -> ErrorInfo:
    """The exception as the parser reads it back from a real formatted traceback."""
    (event,) = events_from_lines(formatted(frames, exc).splitlines(), "server.log", NO_NOTICES)
    return event.chain[-1]


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(PATTERNS)


PORT_MESSAGE = "port 30000 is already in use by 'nginx'; pick another with --port"


def test_exact_match_captures_typed_params_and_weighs_the_site(matcher):
    bare = matcher.match_message(PORT_MESSAGE, "ValueError")
    assert (bare.pattern.id, bare.match_kind, bare.params) == ("demo.port-in-use", MatchKind.EXACT,
                                                               {"port": 30000, "owner": "nginx"})
    assert bare.evidence == Evidence.MESSAGE and 0.8 <= bare.confidence < 1.0
    at_site = matcher.match(traced(LAUNCH + [Frame("demo/launch.py", 40, "check_ports", "        raise ValueError(")],
                                   ValueError(PORT_MESSAGE)))
    assert at_site.match_kind is MatchKind.EXACT and at_site.confidence == 1.0
    assert at_site.evidence == (Evidence.MESSAGE | Evidence.PACKAGE | Evidence.FILE | Evidence.FUNCTION
                                | Evidence.LINE)
    assert at_site.evidence.names == ["message", "package", "file", "function", "line"]


def test_exact_requires_the_exception_type(matcher):
    assert matcher.match_message(PORT_MESSAGE, "TypeError").match_kind is not MatchKind.EXACT


def test_template_of_only_a_field_never_matches_exactly(matcher):
    assert matcher.match_message("anything at all", "ValueError").match_kind is MatchKind.UNKNOWN


def test_a_pattern_belongs_to_its_package(matcher):
    """The same text raised by another library's code is not the demo error."""
    foreign = traced(FOREIGN, ValueError(PORT_MESSAGE))
    assert matcher.match(foreign).pattern is None


def test_generic_template_needs_the_site_to_agree(matcher):
    elsewhere = traced(LAUNCH + [Frame("demo/other.py", 5, "convert", "    raise ValueError(")],
                       ValueError("Unsupported dtype: float8"))
    assert matcher.match(elsewhere).pattern is None
    at_site = traced(LAUNCH + [Frame("demo/quant.py", 31, "pick_kernel", "    raise ValueError(")],
                     ValueError("Unsupported dtype: float8"))
    found = matcher.match(at_site)
    assert (found.pattern.id, found.match_kind) == ("demo.dtype", MatchKind.EXACT)
    assert found.confidence <= 0.9
    offered = matcher.match_message("ValueError: Unsupported dtype: float8")
    assert (offered.pattern.id, offered.match_kind) == ("demo.dtype", MatchKind.POSSIBLE)
    assert offered.confidence < 0.5


def _bare_line(exc: BaseException) -> ErrorInfo:
    """The exception as a log shows it with no traceback: its last line alone."""
    (event,) = events_from_lines([text_of(exc).splitlines()[-1]], "server.log", NO_NOTICES)
    return event.chain[-1]


def test_a_bare_line_in_a_log_is_not_pinned_on_a_generic_text_with_values(matcher):
    """The interpreter itself says `'EagleProposer' object has no attribute 'positions'`: a log's bare
    line that fits a generic template with values names no pattern; `explain` still offers it."""
    missing = capture(lambda: object.__getattribute__(object(), "positions"))
    assert isinstance(missing, AttributeError)
    line = _bare_line(missing)
    assert line.frames == () and matcher.match(line).pattern is None
    asked = matcher.match_message(f"AttributeError: {missing}")
    assert (asked.pattern.id, asked.match_kind) == ("demo.getattr", MatchKind.POSSIBLE)
    assert matcher.match(_bare_line(ValueError("Unsupported dtype: float8"))).pattern is None
    # a fixed text is that text wherever it is read: still offered
    fixed = matcher.match(_bare_line(RuntimeError("Failed to infer device type")))
    assert (fixed.pattern.id, fixed.match_kind) == ("demo.no-device", MatchKind.POSSIBLE)


def test_a_text_raised_by_functions_in_several_files_is_only_possibly_one_of_them(matcher):
    """A bare line whose text two methods in two files raise alike names neither for sure: the chosen
    one is possible. Its frames tell which; a function moved to another file is the same error."""
    said = ValueError("The input size is not aligned with the quantized weight shape.")
    bare = matcher.match(_bare_line(said))
    assert (bare.pattern.id in ("demo.quant-a", "demo.quant-b"), bare.match_kind) == (True, MatchKind.POSSIBLE)
    at_gptq = traced(LAUNCH + [Frame("demo/quant/gptq.py", 52, "create_weights", "    raise ValueError(")], said)
    found = matcher.match(at_gptq)
    assert (found.pattern.id, found.match_kind) == ("demo.quant-b", MatchKind.EXACT)
    moved = matcher.match(_bare_line(ValueError("Global server args is not set yet!")))
    assert moved.match_kind is MatchKind.EXACT


def test_same_text_twins_are_told_apart_by_function_in_any_frame(matcher):
    """The error is raised in a shared helper; the caller's frame names the twin."""
    helper = Frame("demo/loader_utils.py", 9, "fail", "    raise RuntimeError(")
    through_moe = traced(LAUNCH + [Frame("demo/loader.py", 158, "load_moe", "        fail(name)"), helper],
                         RuntimeError("weights of experts.0 are missing from the checkpoint"))
    assert matcher.match(through_moe).pattern.id == "demo.twin-load-moe"
    through_dense = traced(LAUNCH + [Frame("demo/loader.py", 104, "load_dense", "        fail(name)"), helper],
                           RuntimeError("weights of lm_head are missing from the checkpoint"))
    assert matcher.match(through_dense).pattern.id == "demo.twin-load"


def test_raise_site_matches_a_reworded_message_and_rejects_an_unrelated_one(matcher):
    moved = [Frame("demo/launch.py", 44, "check_ports", "    raise ValueError(")]
    found = matcher.match(traced(LAUNCH + moved, ValueError("port 30000 is taken by 'nginx', choose another port")))
    assert (found.pattern.id, found.match_kind) == ("demo.port-in-use", MatchKind.RAISE_SITE)
    assert Evidence.TEXT in found.evidence and Evidence.FUNCTION in found.evidence and 0.5 <= found.confidence < 1
    unrelated = matcher.match(traced(LAUNCH + moved, ValueError("kv cache exhausted during warmup")))
    assert unrelated.pattern is None


def test_raise_site_ranks_text_before_line_distance(matcher):
    """The audio limit moved onto the image limit's old line: the words decide, not the line."""
    frames = LAUNCH + [Frame("demo/mm.py", 70, "check_limits", "        raise ValueError(")]
    found = matcher.match(traced(frames, ValueError("Too many audio clips were given: 5 > 4")))
    assert (found.pattern.id, found.match_kind) == ("demo.audio-limit", MatchKind.RAISE_SITE)


def test_bare_assert_is_recognised_by_its_expression_wherever_it_moved(matcher):
    far = LAUNCH + [Frame("demo/launch.py", 131, "check_tp", "        assert tp_size <= num_gpus")]
    found = matcher.match(traced(far, AssertionError()))
    assert (found.pattern.id, found.match_kind) == ("demo.bare-assert", MatchKind.RAISE_SITE)
    assert Evidence.ASSERT in found.evidence
    other = LAUNCH + [Frame("demo/launch.py", 131, "check_tp", "        assert pp_size <= num_nodes")]
    assert matcher.match(traced(other, AssertionError())).pattern is None


def test_raise_site_keys_are_package_relative_not_the_last_two_parts(matcher):
    vllm = [Frame("/opt/venv/lib/python3.11/site-packages/vllm/model_executor/layers/linear.py", 88,
                  "weight_loader", "        assert param.shape == loaded.shape")]
    assert matcher.match(traced(vllm, AssertionError())).pattern is None
    ours = [Frame("demo/gen/layers/linear.py", 90, "weight_loader", "        assert param.shape == loaded.shape")]
    assert matcher.match(traced(ours, AssertionError())).pattern.id == "demo.linear-assert"


@pytest.mark.parametrize("path, relative", [
    ("/usr/lib/python3/dist-packages/vllm-0.7.4+g98.cu124-py3.10-linux-x86_64.egg/vllm/config.py", "vllm/config.py"),
    ("/.../vllm/model_executor/models/qwen2.py", "vllm/model_executor/models/qwen2.py"),  # a paste's elision
    (".../sglang/srt/server_args.py", "sglang/srt/server_args.py"),
    ("/home/u/.../site-packages/torch/cuda/__init__.py", "torch/cuda/__init__.py"),
    ("/opt/conda/lib/python3.10/site-packages/foo.egg-info/x.py", "foo.egg-info/x.py"),
])
def test_package_relative_sees_through_eggs_and_elisions(path, relative):
    assert package_relative(path) == relative


def test_fuzzy_tolerates_reworded_filler_and_appended_text(matcher):
    said = "tensor parallel size 3 should evenly divide the number of attention heads (32)"
    reworded = matcher.match(traced(LAUNCH, ValueError(said)))  # (a frame of the package: its raise site not shown)
    assert (reworded.pattern.id, reworded.match_kind) == ("demo.tp-divides", MatchKind.FUZZY)
    extended = matcher.match(traced(LAUNCH, ValueError("tensor parallel size 3 must divide the number of attention "
                                                       "heads (32). Pick a --tp-size that divides it.")))
    assert (extended.pattern.id, extended.match_kind) == ("demo.tp-divides", MatchKind.FUZZY)
    assert 0.6 <= extended.confidence < 0.9 and Evidence.TEXT in extended.evidence
    # without a frame, a like text may be another project's: only possibly this one
    alone = matcher.match_message(said, "ValueError")
    assert (alone.pattern.id, alone.match_kind) == ("demo.tp-divides", MatchKind.POSSIBLE)
    assert alone.confidence <= 0.5


def test_fuzzy_tolerates_a_fixed_typo(matcher):
    found = matcher.match(traced(LAUNCH, ValueError("tensor praallel size 3 must divide the number of attention heads (32)")))
    assert (found.pattern.id, found.match_kind) == ("demo.tp-divides", MatchKind.FUZZY)


def test_fuzzy_treats_a_changed_content_word_as_another_error(matcher):
    found = matcher.match_message("tensor parallel size 3 must divide the number of key-value heads (32)", "ValueError")
    assert found.pattern is None


CUT = [Pattern(id="demo.oom", exception="MemoryError", source=_at("demo/alloc.py", 10, "malloc"),
               template="out of device memory. Tried to allocate {size}. Device {gpu} has a total capacity of {total} "
                        "of which {free} is free. {details}"),
       Pattern(id="demo.oom-old", exception="MemoryError",  # (one release's wording, opening alike)
               source=PatternSource(project="demo", path="demo/alloc.py", function="malloc", version="2.1"),
               template="out of device memory. Tried to allocate {size}. Device {gpu} has a total capacty of {total} "
                        "of which {free} is free. {details}"),
       Pattern(id="demo.unsupported", exception="MemoryError", template="{kind} is not supported by this allocator: "
                                                                            "choose another allocation backend")]


@pytest.mark.parametrize(("said", "found"), [
    ("out of device memory. Tried to allocate 330.00 MiB.", "demo.oom"),  # (a paste or a terminal cut it)
    ("out of device memory. Tried to allocate 330.00 MiB. Device 0 has a total capa", "demo.oom"),
    ("out of device memory. Tried to free 330.00 MiB.", None),  # (its opening goes on otherwise)
    ("out of device memory.", None),  # (too little of it to say whose it is)
    ("pinned is not supported by this allo", None)])  # (a template that opens with a value)
def test_a_message_cut_short_is_the_error_whose_opening_words_it_keeps(said, found):
    """A message cut short after a template's opening words, long enough to say whose they are, where the template
    could go on from there: that error, fuzzily and without values (they may be cut too); the current wording before a
    release's that opens alike. A message whose opening goes on otherwise, or that keeps too little, is none."""
    got = Matcher(CUT).match(traced(LAUNCH, MemoryError(said)))
    assert (got.pattern.id if got.pattern else None) == found
    if found:
        assert (got.match_kind, got.params) == (MatchKind.FUZZY, {})


def test_words_glued_to_a_field_and_a_plain_percent_still_match_exactly(matcher):
    glued = matcher.match_message("kv_block_cnt must be a positive multiple of the page size, got 0", "ValueError")
    assert (glued.pattern.id, glued.match_kind, glued.params) == ("demo.blocks", MatchKind.EXACT,
                                                                  {"name": "kv", "n": 0})
    modulo = matcher.match_message("chunked_prefill_size % page_size must be zero", "ValueError")
    assert (modulo.pattern.id, modulo.match_kind) == ("demo.modulo", MatchKind.EXACT)


def test_logged_lines_are_not_exception_diagnoses(matcher):
    found = matcher.match_message("Scheduler hit an exception while decoding batches")
    assert found.pattern is None
    assert matcher.pattern("demo.logged") is not None  # still explained by id


def _raise_port_error():
    port, owner = 30000, "nginx"
    raise ValueError(f"port {port} is already in use by {owner!r}; pick another with --port")


def _chained():
    try:
        _raise_port_error()
    except ValueError as err:
        raise RuntimeError("server failed to start") from err


def test_chain_diagnosis_points_at_the_link_that_matched(matcher):
    (event,) = events_from_lines(text_of(capture(_chained)).splitlines(), "x.log", NO_NOTICES)
    found = Matcher([p for p in PATTERNS if p.id != "demo.port-in-use"]
                    + [Pattern(id="demo.port-in-use", exception="ValueError", template=PATTERNS[0].template)]
                    ).match_event(event)
    assert (found.pattern.id, found.link) == ("demo.port-in-use", 0)


def test_match_message_understands_a_type_prefix(matcher):
    found = matcher.match_message("ValueError: port 1 is already in use by 'x'; pick another with --port")
    assert found.pattern.id == "demo.port-in-use"
    assert matcher.match_message("TypeError: port 1 is already in use by 'x'; pick another with --port").pattern is None


@pytest.mark.parametrize(("said", "found"), [
    ("[Errno 2] No such file or directory: 'nin", "demo.no-tool"),  # (cut short inside the name)
    ("[Errno 2] No such file or directory", None)])  # (an OS error that names no file: whole, not cut)
def test_an_os_errors_text_without_a_file_is_whole_not_a_longer_text_cut_short(said, found):
    """`[Errno 2] No such file or directory` is the whole text of an OS error that names no file (a deleted working
    directory, a socket path): not the opening of a page's text that names one."""
    tool = [Pattern(id="demo.no-tool", exception="FileNotFoundError", style="plain",
                    template="[Errno 2] No such file or directory: 'ninja'")]
    got = Matcher(tool).match(traced(LAUNCH, FileNotFoundError(said)))
    assert (got.pattern.id if got.pattern else None) == found
