"""Every curated page recognises its error in a log: for each example, the exception is raised for
real through frames of its project (the page's raise site, or the frame a `site` names), formatted
by `traceback`, laid out the way that project's server logs it, and scanned; the page must be the
diagnosis. Notices (`match: line`) are written as the log line they are."""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
import re
import socket
import threading

import pytest

from analyzer.core.scan import events_from_lines
from fixtures.generate import SCHED, Frame, foreign_exception, formatted
from tests import failureforms as forms
from tests.realtb import capture, text_of
from tests.support import builtin_engine, engine_incidents
from tests.test_packs import CURATED

PAGES = [p for p in CURATED if p.examples]
_DEFAULT_MODULES = {"DistBackendError": "torch.distributed", "OutOfMemoryError": "torch",
                    "ChildFailedError": "torch.distributed.elastic.multiprocessing.errors"}
_VLLM_CORE = [Frame("vllm/v1/engine/core.py", 390, "run_engine_core", "        engine_core = EngineCoreProc(*args, **kwargs)"),
              Frame("vllm/v1/engine/core.py", 78, "__init__", "        self._initialize_kv_caches(vllm_config)")]


# (made from their fields or sub-exceptions, not a text: a stand-in prints the same line)
_WITH_FIELDS = {"UnicodeEncodeError", "UnicodeDecodeError", "ExceptionGroup"}


def _exception_class(name: str) -> type[BaseException]:
    module, _, short = name.rpartition(".")
    if not module and isinstance(getattr(builtins, short, None), type) and short not in _WITH_FIELDS:
        return getattr(builtins, short)
    module = module or _DEFAULT_MODULES.get(short, "builtins")
    base = OSError if short.endswith("Error") and "metadata" in module else RuntimeError
    if short.endswith("ArgumentError"):
        base = ValueError
    return foreign_exception(module, short, base)


def _innermost(pattern) -> Frame:
    if pattern.site is not None and pattern.site.code:
        site = pattern.site
        code = re.sub(r"\{\w*\}", "name_mapped", site.code)  # a `{key}` stands for any text
        return Frame((site.path or "") + "llama.py", 480, site.function or "load_weights", "            " + code)
    src = pattern.source
    function = (src.function or "run").rsplit(".", 1)[-1].replace("::", "_")
    if src.path and src.path.endswith(".py"):
        return Frame(src.path, src.line or 120, function if function.isidentifier() else "run",
                     f"        raise {pattern.short_exception}(")
    if src.project == "vllm":
        return Frame("vllm/worker/model_runner.py", 1700, "execute_model", "        hidden = model_executable(**inputs)")
    return Frame("torch/distributed/distributed_c10d.py", 2501, "all_reduce", "        work = group.allreduce([tensor], opts)")


def _traceback_text(pattern, example: str) -> str:
    cls = _exception_class(pattern.exception)
    exc = cls(ast.literal_eval(example)) if pattern.short_exception == "KeyError" else cls(example)
    outer = _VLLM_CORE if pattern.source.project == "vllm" else SCHED[:2]
    if pattern.site is not None and pattern.site.within:  # the function it happens within, in its package
        package = pattern.site.path or "sglang/srt/"
        outer = outer + [Frame(package + "model_runner.py", 310, pattern.site.within[0], "        self.step()")]
    if "\n\n" in example:
        # A message with a paragraph after a blank line is read whole where a chain follows it, as where
        # transformers re-raises the Hub's error (a lone one ends at the blank line: core/assemble.py).
        wrapper = Frame("transformers/utils/hub.py", 470, "cached_files", "        raise OSError(")
        return formatted(outer + [wrapper], OSError("We couldn't connect to load this file."),
                         cause_frames=outer + [_innermost(pattern)], cause=exc)
    return formatted(outer + [_innermost(pattern)], exc)


def _log(pattern, example: str) -> list[str]:
    if "::" in pattern.exception:  # a C++ exception reaches the log through std::terminate
        return [f"terminate called after throwing an instance of '{pattern.exception}'",
                f"  what():  {example}", "Exception raised from ncclCommWatchdog at "
                "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1595 (most recent call first):"]
    if pattern.match == "line":
        return ["[2026-12-03 10:00:01] server_args=ServerArgs(model_path='/models/m', port=31000)",
                f"[2026-12-03 10:00:05] ERROR:    {example}"]
    lines = _traceback_text(pattern, example).splitlines()
    if pattern.source.project == "vllm":  # the engine core's output, its process tag on every line
        head = "INFO 12-03 10:00:01 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model='/models/m', max_seq_len=8192"
        return [head, *(f"(EngineCore_DP0 pid=4300) {line}" for line in lines)]
    if pattern.source.project == "sglang":  # SGLang prefixes the first line of a record only
        head = "[2026-12-03 10:00:01] server_args=ServerArgs(model_path='/models/m', tp_size=2, mem_fraction_static=0.8)"
        return [head, f"[2026-12-03 10:00:05 TP0] Scheduler hit an exception: {lines[0]}", *lines[1:]]
    return [f"[rank0]: {line}" for line in lines]  # torchrun's --tee prefix on every line


@pytest.mark.parametrize("pattern", PAGES, ids=lambda p: p.id)
def test_each_curated_page_is_found_in_a_generated_log(pattern):
    for example in pattern.examples:
        analysis = builtin_engine().analysis()
        for event in events_from_lines(_log(pattern, example), "server.log", builtin_engine().notices):
            analysis.add(event)
        found = [i.diagnosis.pattern.id for i in analysis.incidents() if i.diagnosis.pattern]
        assert pattern.id in found, (example, found)


def test_a_pd_transfer_failure_logged_by_the_scheduler_gets_its_page():
    """SGLang's schedulers log a failed KV transfer as words and the error's text (`... with exception
    KVTransferError(bootstrap_room=N): <reason>`), on each TP rank: the reason's page; a dead peer is no root cause
    in this log, a chunk that could not be sent is."""
    def logged(side: str, reason: str, rank: int) -> str:
        return (f"[2026-02-26 12:53:08 TP{rank}] {side} transfer failed for request rank={rank} req.rid='af2f' "
                f"req.bootstrap_room=6989861766352545488 with exception "
                f"KVTransferError(bootstrap_room=6989861766352545488): {reason}")
    for reason, page, role in (
            ("Decode instance could be dead, remote mooncake session 10.82.101.249:16324 is not alive",
             "sglang.pd-transfer-decode-dead", "consequence"),
            ("Failed to send kv chunk of 6989861766352545488 to 10.72.0.9:44781", "sglang.pd-transfer-send-failed", "root")):
        analysis = builtin_engine().analysis()
        for event in events_from_lines([logged("Prefill", reason, rank) for rank in (3, 4)], "server.log",
                                       builtin_engine().notices):
            analysis.add(event)
        (incident,) = analysis.incidents()
        assert (incident.diagnosis.pattern.id, incident.role, incident.count) == (page, role, 2)
        assert incident.info.message == reason


def test_enough_curated_pages():
    assert len(PAGES) >= 40 + 35  # the 40 new pages on top of the earlier ones


def test_weight_loading_keyerror_is_told_by_its_frame_not_its_message():
    sglang_page = next(p for p in PAGES if p.id == "sglang.weight-not-in-model")
    log = _log(sglang_page, "'model.layers.3.mlp.experts.w2_weight_scale_inv'")
    analysis = builtin_engine().analysis()
    for event in events_from_lines(log, "server.log", builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.diagnosis.pattern.id == "sglang.weight-not-in-model"
    assert incident.diagnosis.params == {"name": "model.layers.3.mlp.experts.w2_weight_scale_inv"}
    elsewhere = [line.replace("param = params_dict[", "value = cache[") for line in log]
    analysis = builtin_engine().analysis()
    for event in events_from_lines(elsewhere, "server.log", builtin_engine().notices):
        analysis.add(event)
    assert all(i.diagnosis.pattern is None or "weight" not in i.diagnosis.pattern.id for i in analysis.incidents())


def test_a_notice_that_quotes_an_undefined_symbol_keeps_its_own_page(tmp_path):
    """vLLM's warning quotes the loader's text (`...so: undefined symbol: ...`), which a page for any extension's
    undefined symbol also fits where it stands alone: the warning, in a copy that glued a backtick to it above an
    SGLang stack (whose run asks the common pages before vLLM's), is still vLLM's page; the loader's text alone is
    the extension's."""
    said = ("/opt/conda/lib/python3.10/site-packages/vllm/_core_C.abi3.so: undefined symbol: "
            "_ZN5torch6detail10class_baseC2ERKSsS3_SsRKSt9type_infoS6_")
    launch = Frame("/opt/conda/lib/python3.10/site-packages/sglang/launch_server.py", 6, "<module>",
                   "    from sglang.srt.server import launch_server")
    cut = formatted([launch], ImportError("cannot import name 'launch_server'")).splitlines()[:-1]  # (a cut paste)
    for line, page in ((f"`WARNING 09-04 04:55:04 _core_ext.py:180] Failed to import from vllm._core_C with "
                        f"ImportError('{said}')", "vllm.core-ops-import-failed"),
                       ("ImportError: /opt/conda/lib/python3.10/site-packages/fused_layer_norm_cuda.cpython-310-"
                        "x86_64-linux-gnu.so: undefined symbol: _ZN2at7getTypeERKNS_6TensorE",
                        "deps.extension-undefined-symbol")):
        log = tmp_path / "server.log"
        log.write_text("\n".join([line, *cut]) + "\n")
        first, *_ = engine_incidents(builtin_engine(), log)
        assert first.diagnosis.pattern.id == page


@pytest.mark.parametrize("child, page", [
    (forms.segfault_child, "python.fatal-segmentation-fault"),
    (forms.bus_error_child, "python.fatal-bus-error"),
])
def test_faulthandlers_dump_of_a_fatal_signal_gets_its_page(child, page):
    analysis = builtin_engine().analysis()
    for event in events_from_lines(["(RayWorker pid=3554) INFO starting", *child()], "server.log",
                                   builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert (incident.info.exception_type, incident.diagnosis.pattern.id) == ("Fatal Python error", page)


def _write_to_a_legacy_console():
    "100% \u2588\u2588\u2588\u2588".encode("cp1252")


def _read_utf8_with_the_locale_codec():
    "\u8bad\u7ec3\u914d\u7f6e".encode("utf-8").decode("gbk")


def _connect_where_nothing_listens():
    with socket.socket() as probe:  # a port just freed: nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    socket.create_connection(("127.0.0.1", port), timeout=5)


def _get_the_loop_in_a_worker_thread():
    caught: list[RuntimeError] = []

    def work():
        try:
            asyncio.get_event_loop()
        except RuntimeError as error:
            caught.append(error)

    thread = threading.Thread(target=work, name="AnyIO worker thread")
    thread.start()
    thread.join()
    raise caught[0]


@pytest.mark.parametrize("fails, page", [
    (_get_the_loop_in_a_worker_thread, "python.no-event-loop-in-thread"),
    (lambda: json.loads(""), "python.json-no-value"),  # (an empty reply read with .json())
    (lambda: json.loads("{'model': 'm'}"), "python.json-property-name-unquoted"),  # (a dict's repr)
    (lambda: json.loads('{"a": [1, 2'), "python.json-malformed"),  # (cut off)
    (lambda: json.loads('{"a": 1}\n{"a": 2}\n'), "python.json-extra-data"),  # (JSON Lines)
    (_connect_where_nothing_listens, "python.connection-refused"),
    (_write_to_a_legacy_console, "python.unicode-encode-legacy-codec"),
    (_read_utf8_with_the_locale_codec, "python.unicode-decode-wrong-codec"),
])
def test_an_error_the_system_words_gets_its_page(fails, page):
    analysis = builtin_engine().analysis()
    for event in events_from_lines(text_of(capture(fails)).splitlines(), "train.log", builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.diagnosis.pattern.id == page


@pytest.mark.parametrize("root", [
    "/usr/local/lib/python3.10/dist-packages/vllm-0.7.4.dev8+g981f3c8.cu124-py3.10-linux-x86_64.egg/",  # an egg
    "/.../",  # a paste that elided where the package lives
])
def test_a_weight_missing_from_the_model_is_told_in_any_helper_under_any_install(root):
    loader = Frame(root + "vllm/model_executor/models/utils.py", 247, "_load_module",
                   "        loaded_params = module_load_weights(weights)")
    models = root + "vllm/model_executor/models/granitemoehybrid.py"
    frames = [loader, Frame(models, 461, "load_weights", "            _load_expert("),
              Frame(models, 433, "_load_expert", "        param = params_dict[n]")]
    lines = formatted(frames, KeyError("layers.0.block_sparse_moe.experts.w13_weight")).splitlines()
    analysis = builtin_engine().analysis()
    for event in events_from_lines([f"(EngineCore_DP0 pid=479) {line}" for line in lines], "server.log",
                                   builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.diagnosis.pattern.id == "vllm.weight-not-in-model"
    assert incident.diagnosis.params["name"] == "layers.0.block_sparse_moe.experts.w13_weight"


@pytest.mark.parametrize("frames, expected", [
    ([Frame("sglang/srt/model_executor/model_runner.py", 310, "load_model", "        self.model = get_model()")],
     "torch.cuda-oom-loading-weights"),
    ([Frame("sglang/srt/model_executor/cuda_graph_runner.py", 420, "capture_one_batch_size", "        run_once()")],
     "torch.cuda-oom-graph-capture"),
    ([Frame("vllm/worker/worker.py", 230, "determine_num_available_blocks", "        self.model_runner.profile_run()")],
     "vllm.oom-during-memory-profiling"),
    ([Frame("sglang/srt/managers/tp_worker.py", 402, "forward_batch_generation", "        logits = self.forward()")],
     "torch.cuda-out-of-memory"),
])
def test_one_oom_message_is_told_apart_by_the_phase_it_happens_in(frames, expected):
    oom = _exception_class("torch.OutOfMemoryError")(
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.19 GiB of which 1.50 GiB "
        "is free. Including non-PyTorch memory, this process has 77.68 GiB memory in use.")
    inner = Frame("torch/nn/modules/linear.py", 125, "forward", "        return F.linear(input, self.weight, self.bias)")
    lines = formatted(SCHED[:1] + frames + [inner], oom).splitlines()
    analysis = builtin_engine().analysis()
    for event in events_from_lines([f"[rank1]: {line}" for line in lines], "server.log", builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.diagnosis.pattern.id == expected
