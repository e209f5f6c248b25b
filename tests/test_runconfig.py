"""The run's configuration read from its log, and fixes computed from it: the user's own values, only
the flags of the server that wrote the log, and the user's launch command with the fix applied."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from analyzer.cli import main
from analyzer.core.copyfix import apply_change
from analyzer.core.render import render_fixes
from analyzer.core.runconfig import RunConfigCollector, Server, parse_launch_command, run_config_from_lines
from analyzer.core.scan import events_from_lines
from analyzer.core.schema import Fix
from analyzer.core.triggers import TriggerFinder, available
from analyzer.engine import Engine, Options
from analyzer.sinks.page import page_dict, render_page
from analyzer.sinks.text import render_report
from fixtures.generate import SCHED, Frame, foreign_exception, formatted
from tests.support import builtin_engine
from tests.test_packs import builtin_matcher

SGLANG_ARGS = ("[2026-12-03 10:00:01] server_args=ServerArgs(model_path='/models/Llama-3.1-70B', "
               "tokenizer_path='/models/Llama-3.1-70B', tokenizer_mode='auto', trust_remote_code=False, dtype='auto', "
               "quantization=None, context_length=None, host='127.0.0.1', port=30000, mem_fraction_static=0.8, "
               "max_running_requests=None, chunked_prefill_size=8192, schedule_conservativeness=1.0, tp_size=4, "
               "json_model_override_args='{}', lora_paths=None, weird=<object at 0x7f00>, "
               "disaggregation_mode='null', speculative_algorithm=None, enable_dp_attention=False)")
VLLM_ENGINE = ("INFO 12-03 10:00:01 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: "
               "model='Qwen/Qwen2.5-7B-Instruct', speculative_config=None, tokenizer='Qwen/Qwen2.5-7B-Instruct', "
               "tokenizer_mode=auto, dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=2, "
               "compilation_config={\"level\":3,\"cudagraph_capture_sizes\":[8,4,2,1]}, use_cached_outputs=True, ")
VLLM_ARGS = ("INFO 12-03 10:00:00 [cli_args.py:297] non-default args: {'model': 'Qwen/Qwen2.5-7B-Instruct', "
             "'gpu_memory_utilization': 0.85, 'tensor_parallel_size': 2}")


def test_sglang_server_args_are_typed():
    config = run_config_from_lines(["INFO starting", SGLANG_ARGS])
    assert config.server is Server.SGLANG and config.model == "/models/Llama-3.1-70B"
    assert config.get("mem_fraction_static") == 0.8 and config.get("tp_size") == 4
    assert config.get("quantization") is None and config.get("trust_remote_code") is False
    assert config.get("json_model_override_args") == "{}" and config.get("weird") == "<object at 0x7f00>"
    assert config.get("enable_dp_attention") is False


def test_vllm_engine_config_and_non_default_args():
    config = run_config_from_lines([VLLM_ARGS, VLLM_ENGINE, "INFO 12-03 [api_server.py:1043] vLLM API server version 0.8.5"])
    assert (config.server, config.version, config.model) == (Server.VLLM, "0.8.5", "Qwen/Qwen2.5-7B-Instruct")
    assert config.get("gpu_memory_utilization") == 0.85 and config.get("tensor_parallel_size") == 2
    assert config.get("max_model_len") == 32768  # the engine calls it max_seq_len, the flag --max-model-len
    assert config.get("tokenizer_mode") == "auto" and config.get("compilation_config")["level"] == 3
    old = run_config_from_lines([("INFO 12-27 08:52:17 llm_engine.py:249] Initializing an LLM engine (v0.6.4) with "
                                 "config: model='/data/Qwen2-VL', dtype=torch.bfloat16, max_seq_len=4096")])
    assert old.version == "0.6.4" and old.get("max_model_len") == 4096


@pytest.mark.parametrize("line, server, expected", [
    ("$ python3 -m  sglang.launch_server --model-path /m --tp 8 --mem-fraction-static 0.7 --trust-remote-code",
     Server.SGLANG, {"model_path": "/m", "tp_size": 8, "mem_fraction_static": 0.7, "trust_remote_code": True}),
    ("root@node:/# CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model=/m --dist-init-addr $IP:20000",
     Server.SGLANG, {"model_path": "/m", "dist_init_addr": "$IP:20000"}),
    ("vllm serve meta-llama/Llama-3.1-8B --gpu-memory-utilization=0.9 -tp 2 --max-model-len 8192",
     Server.VLLM, {"model": "meta-llama/Llama-3.1-8B", "gpu_memory_utilization": 0.9, "tensor_parallel_size": 2,
                   "max_model_len": 8192}),
    ("python -m vllm.entrypoints.openai.api_server --model /m --enforce-eager --port 8001",
     Server.VLLM, {"model": "/m", "enforce_eager": True, "port": 8001}),
])
def test_launch_commands(line, server, expected):
    config = run_config_from_lines([line])
    assert config.server is server and config.command is not None
    assert {k: config.get(k) for k in expected} == expected


def test_command_continued_over_lines_and_cut_commands():
    collector = RunConfigCollector()
    for line in ["$ python -m sglang.launch_server \\", "    --model-path /m \\", "    --tp 2 --mem-fraction-static 0.75"]:
        collector.feed(line)
    config = collector.config
    assert config.get("tp_size") == 2 and config.get("mem_fraction_static") == 0.75
    assert config.command.text == "python -m sglang.launch_server --model-path /m --tp 2 --mem-fraction-static 0.75"
    assert parse_launch_command("./entrypoint.sh: line 48: 28 Killed python3 -m sglang.launch_server --host 0.0.0.0 ...") is None
    assert parse_launch_command('File "/x/sglang/launch_server.py", line 14, in <module>') is None


def test_a_command_continued_without_end_stops_at_a_bound():
    """Line after line ending in `\\` (crafted, or a broken log) would otherwise grow the command
    without bound, and copy it whole on every line."""
    collector = RunConfigCollector()
    collector.feed("$ python -m sglang.launch_server --model-path /m \\")
    for _ in range(20_000):
        collector.feed("    --tp 2 \\")
    assert not collector.continuing and collector.config.command is not None
    assert len(collector.config.command.text) <= 200 * 1024


def test_server_from_frames_when_no_config_line():
    config = run_config_from_lines(['  File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 390, in run'])
    assert config.server is Server.VLLM and not config.settings


FIXES = (
    Fix("Lower it (SGLang)", "Lower the fraction.", "--mem-fraction-static {run.mem_fraction_static}",
        "--mem-fraction-static {run.mem_fraction_static:-0.05}", "sglang"),
    Fix("Lower it (vLLM)", "", "--gpu-memory-utilization {run.gpu_memory_utilization}",
        "--gpu-memory-utilization {run.gpu_memory_utilization:-0.05}", "vllm"),
    Fix("Halve the chunk", "From {run.chunked_prefill_size} to {run.chunked_prefill_size:/2}.",
        "--chunked-prefill-size {run.chunked_prefill_size}", "--chunked-prefill-size {run.chunked_prefill_size:/2}"),
)


def test_computed_values_come_from_the_log():
    config = run_config_from_lines([SGLANG_ARGS])
    lower, chunk = render_fixes(FIXES, {}, config)
    assert (lower.before, lower.after) == ("--mem-fraction-static 0.8", "--mem-fraction-static 0.75")
    assert chunk.text == "From 8192 to 4096." and chunk.after == "--chunked-prefill-size 4096"


def test_without_the_value_the_example_is_left_out_not_guessed():
    everything = render_fixes(FIXES, {}, None)
    assert [f.title for f in everything] == [f.title for f in FIXES]  # server unknown: all of them
    assert all(f.before is None and f.after is None for f in everything)
    assert everything[2].text == "" and everything[0].text == "Lower the fraction."
    tiny = run_config_from_lines(["server_args=ServerArgs(mem_fraction_static=0.04)"])
    assert render_fixes(FIXES[:1], {}, tiny)[0].after is None  # 0.04 - 0.05 is no fraction
    full = run_config_from_lines(["server_args=ServerArgs(mem_fraction_static=0.97)"])
    raise_it = Fix("Raise it", "", "--mem-fraction-static {run.mem_fraction_static}",
                   "--mem-fraction-static {run.mem_fraction_static:+0.05}")
    assert render_fixes((raise_it,), {}, full)[0].after is None  # nor is 1.02


def test_copy_fix_applies_the_change_to_the_users_command():
    config = run_config_from_lines([("$ CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path /m --tp 2 "
                                    "--mem-fraction-static=0.8 --enable-two-batch-overlap"), SGLANG_ARGS])
    lower = render_fixes(FIXES, {}, config)[0]
    assert lower.command == ("CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path /m --tp 2 "
                             "--mem-fraction-static=0.75 --enable-two-batch-overlap")
    command = config.command
    assert apply_change(command, "--enable-two-batch-overlap", "") == (
        "CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path /m --tp 2 --mem-fraction-static=0.8")
    assert apply_change(command, "", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True --disable-cuda-graph") == (
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server "
        "--model-path /m --tp 2 --mem-fraction-static=0.8 --enable-two-batch-overlap --disable-cuda-graph")
    assert apply_change(command, "--tp-size 2", "--tp-size 4").count("--tp 4") == 1  # the user's alias is kept
    assert apply_change(command, "Check nvidia-smi", "") is None  # prose is no change


def _oom_log(head: list[str]) -> list[str]:
    oom = foreign_exception("torch", "OutOfMemoryError")(
        "CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB "
        "is free. Including non-PyTorch memory, this process has 78.15 GiB memory in use.")
    frames = SCHED[:2] + [Frame("torch/nn/functional.py", 2551, "embedding", "    return torch.embedding(weight, input)")]
    lines = formatted(frames, oom).splitlines()
    return [*head, f"[2026-12-03 10:00:05 TP0] Scheduler hit an exception: {lines[0]}", *lines[1:]]


def _oom_fixes(log: list[str]):
    analysis = builtin_engine().analysis()
    for event in events_from_lines(log, "server.log", builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.diagnosis.pattern.id == "torch.cuda-out-of-memory"
    return render_fixes(incident.diagnosis.pattern.fixes, incident.diagnosis.params, run_config_from_lines(log))


def test_oom_on_an_sglang_log_suggests_a_fraction_below_the_logged_one():
    fixes = _oom_fixes(_oom_log([SGLANG_ARGS]))
    lower = next(f for f in fixes if f.after and "--mem-fraction-static" in f.after)
    assert lower.before == "--mem-fraction-static 0.8"
    assert float(lower.after.split()[-1]) < 0.80
    assert not any("gpu-memory-utilization" in (f.after or "") + f.text for f in fixes)


def test_oom_on_a_vllm_log_suggests_vllm_flags_only():
    fixes = _oom_fixes(_oom_log([VLLM_ARGS, VLLM_ENGINE]))
    text = " ".join(f"{f.title} {f.text} {f.before} {f.after}" for f in fixes)
    assert "--gpu-memory-utilization 0.8" in text and "--mem-fraction-static" not in text
    assert "--chunked-prefill-size" not in text
    report = io.StringIO()
    log = _oom_log([VLLM_ARGS, VLLM_ENGINE])
    analysis = builtin_engine().analysis()
    for event in events_from_lines(log, "server.log", builtin_engine().notices):
        analysis.add(event)
    render_report(analysis.incidents(), Console(file=report, width=300), run_of=lambda file: run_config_from_lines(log))
    assert "--gpu-memory-utilization 0.8" in report.getvalue() and "mem-fraction" not in report.getvalue()


@pytest.mark.skipif(not available(), reason="Hyperscan is not installed")
def test_the_fast_path_reports_configuration_lines():
    lines = [SGLANG_ARGS, "INFO noise", VLLM_ENGINE, VLLM_ARGS, "$ vllm serve m --port 1 \\", "    --enforce-eager",
             "python -m sglang.launch_server --model-path /m", "INFO more noise"]
    buffer = ("\n".join(lines) + "\n").encode()
    starts = {buffer.rfind(b"\n", 0, hit) + 1 for hit in TriggerFinder().scan(buffer)}
    reported = {buffer[s:buffer.index(b"\n", s)].decode() for s in starts}
    assert reported == set(lines) - {"INFO noise", "INFO more noise"}


def test_text_and_page_sinks_render_the_runs_fixes():
    command = "$ python -m sglang.launch_server --model-path /models/Llama-3.1-70B --tp 4 --mem-fraction-static 0.8"
    log = _oom_log([command, SGLANG_ARGS])
    analysis = builtin_engine().analysis()
    for event in events_from_lines(log, "server.log", builtin_engine().notices):
        analysis.add(event)
    run = run_config_from_lines(log)
    out = io.StringIO()
    render_report(analysis.incidents(), Console(file=out, width=300), run_of=lambda file: run)
    text = out.getvalue()
    assert "after:  --mem-fraction-static 0.75" in text and "gpu-memory-utilization" not in text
    assert ("your command, fixed: python -m sglang.launch_server --model-path /models/Llama-3.1-70B --tp 4 "
            "--mem-fraction-static 0.75") in text
    (incident,) = analysis.incidents()
    page = io.StringIO()
    render_page(incident.diagnosis.pattern, builtin_matcher(), Console(file=page, width=300), incident.diagnosis, run)
    assert "--chunked-prefill-size 4096" in page.getvalue()
    fixes = page_dict(incident.diagnosis.pattern, incident.diagnosis, run)["fixes"]
    assert fixes[0]["command"].endswith("--mem-fraction-static 0.75")


def test_explain_fills_a_page_from_a_logs_configuration(tmp_path, capsys):
    from analyzer.cli import main

    log = tmp_path / "server.log"
    log.write_text(SGLANG_ARGS + "\n$ python -m sglang.launch_server --model-path /m --mem-fraction-static 0.8\n")
    assert main(["explain", "torch.cuda-out-of-memory", "--config-from", str(log)]) == 0
    page = capsys.readouterr().out
    assert "after:  --mem-fraction-static 0.75" in page and "(vLLM)" not in page
    assert "your command, fixed: python -m sglang.launch_server --model-path /m --mem-fraction-static 0.75" in page


def test_another_servers_command_is_not_this_runs():
    config = run_config_from_lines(["python -m sglang.launch_server --tp 2 --cuda-graph-bs 1,2,4", VLLM_ARGS])
    assert config.server is Server.VLLM and config.command is None and not config.has("tp_size")
    sglang = run_config_from_lines(["python -m sglang.launch_server --tp 2 --cuda-graph-bs 1,2,4"])
    assert sglang.get("cuda_graph_bs") == "1,2,4"  # a command-line word stays as typed unless it is a number


def test_schema_checks_servers_titles_and_sites():
    from analyzer.core.schema import build_pattern

    base = {"id": "demo.x", "exception": "KeyError", "template": "{name!r}"}
    good, problems = build_pattern({**base, "site": {"code": "param  =  params_dict[name]", "function": "load_weights"},
                                    "fixes": [{"title": "t", "server": "vllm"}]}, "f.yaml:1", {})
    assert not problems and good.site.code == "param = params_dict[name]" and good.fixes[0].server == "vllm"
    _, problems = build_pattern({**base, "site": {"function": "f"},
                                 "fixes": [{"title": "Set {run.tp_size}", "server": "trtllm"}]}, "f.yaml:1", {})
    assert {p.message.split(":")[0] for p in problems} == {"fixes[0]", "'site' needs the frame's source line as 'code', or function names as 'within'"}
    assert len(problems) == 3


def _scan_json(tmp_path, log: list[str], *extra: str) -> list[dict]:
    path = tmp_path / "server.log"
    path.write_text("\n".join(log) + "\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["scan", "--format", "json", *extra, str(path)]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_scan_fills_the_oom_fix_from_the_logs_own_configuration(tmp_path, monkeypatch, how):
    """`analyzer scan` end to end: the engine reads the server_args line of the log it scans."""
    log = _oom_log([SGLANG_ARGS, "[2026-12-03 10:00:02] Load weight end."])
    if how == "stdin":
        read_end, write_end = os.pipe()  # a real pipe: stdin is read from its file descriptor
        os.write(write_end, ("\n".join(log) + "\n").encode())  # small enough for the pipe's buffer
        os.close(write_end)
        monkeypatch.setattr("sys.stdin", open(read_end, encoding="utf-8"))  # noqa: SIM115 - stdin for the run
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["scan", "--format", "jsonl", "-"]) == 0
        latest = {json.loads(line)["id"]: json.loads(line) for line in out.getvalue().splitlines()}
        (incident,) = latest.values()
    else:
        (incident,) = _scan_json(tmp_path, log)
    assert incident["pattern_id"] == "torch.cuda-out-of-memory"
    lower = next(fix for fix in incident["fixes"] if fix["after"] and "--mem-fraction-static" in fix["after"])
    assert lower["before"] == "--mem-fraction-static 0.8" and float(lower["after"].split()[-1]) < 0.8
    assert not any("gpu-memory-utilization" in (fix["after"] or "") + fix["text"] for fix in incident["fixes"])


def test_a_log_read_without_expanding_its_paths_takes_no_other_logs_configuration():
    """Files scanned as given (the TUI's live scan) are each a run of their own: a log that shows no
    configuration is not told another's."""
    engine = Engine(Options())
    logs = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
    sglang, plain = str(logs / "sglang_8rank_scheduler_crash.log"), str(logs / "torchrun_interleaved.log")
    list(engine.events([sglang, plain], lambda problem: None))
    assert engine.run_config(sglang).server is Server.SGLANG
    assert engine.run_config(plain) is None or engine.run_config(plain).server is None
