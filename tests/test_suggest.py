"""`analyzer patterns suggest`: templates inferred from occurrences, stubs that pass `patterns
check`, and that make the unknown errors known when loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer.cli import main
from analyzer.core.scan import events_from_lines
from analyzer.core.suggest import StubCollector, infer_template
from analyzer.core.template import compile_template
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
RUN_A = str(LOGS / "torchrun_8rank_cascade.log")
RUN_B = str(LOGS / "torchrun_8rank_cascade_rerun.log")


@pytest.mark.parametrize("messages, template", [
    (["batch 30 not divisible by 4", "batch 31 not divisible by 4"], "batch {value1} not divisible by {value2}"),
    (["Timed out waiting for recv", "Timed out waiting for send"], "Timed out waiting for {value1}"),
    (["worker exited with exitcode=-9. pid=1234", "worker exited with exitcode=1. pid=77"],
     "worker exited with exitcode={exitcode}. pid={pid}"),
    (["cannot open '/data/a.json' on cuda:3"], "cannot open {quoted} on {device}"),  # one occurrence: masked values
    (["no route to 10.0.0.3:29500 after 3 s", "no route to 10.0.0.9:31000 after 12 s"],
     "no route to {endpoint} after {value1} s"),
    (["bad value {x} for port 80", "bad value {x} for port 8080"], "bad value {{x}} for port {value1}"),
    (["shard 3 of 8 missing", "shard 3 of 8 missing"], "shard {value1} of {value2} missing"),
])
def test_template_keeps_what_all_share_and_makes_the_rest_fields(messages, template):
    assert infer_template(messages) == template
    compiled = compile_template(template, "format")
    assert all(compiled.match(message) is not None for message in messages)


def test_a_long_run_of_words_before_a_value_is_read_in_one_pass():
    """A value after 100 kB of text that holds no key (`name=`): its field is named in one pass (each place the key
    was looked for read the text to its end: minutes), and a key right before the value still names it."""
    words = "a" * 100_000
    assert infer_template([f"{words} 30 left", f"{words} 31 left"]) == f"{words} {{value1}} left"
    assert infer_template([f"{words} port=30", f"{words} port=31"]) == f"{words} port={{port}}"


def test_a_field_never_has_to_match_nothing():
    messages = ["cache miss in layer", "cache miss in layer 12 of 80"]
    template = infer_template(messages)
    compiled = compile_template(template, "format")
    assert all(compiled.match(message) is not None for message in messages), template


def _split_batch(batch: int, world: int) -> None:
    if batch % world:
        raise ValueError(f"batch {batch} not divisible by {world}")


def test_collector_groups_real_errors_by_fingerprint():
    collector = StubCollector()
    for batch in (30, 31, 33):
        text = text_of(capture(lambda batch=batch: _split_batch(batch, 4)))
        for event in events_from_lines(text.splitlines(), "train.log", NO_NOTICES):
            collector.add(event.root, event.span)
    (stub,) = collector.stubs()
    assert stub.template == "batch {value1} not divisible by {value2}" and stub.count == 3
    assert stub.exception == "ValueError" and stub.id.startswith("local.valueerror._split_batch.")
    entry = stub.pack_entry()
    assert entry["source"]["function"] == "_split_batch" and entry["source"]["path"].endswith("test_suggest.py")
    assert entry["examples"] == ["batch 30 not divisible by 4", "batch 31 not divisible by 4",
                                 "batch 33 not divisible by 4"]
    assert (entry["meaning"], entry["fixes"], entry["role"]) == ("", [], "root")


def test_suggest_writes_stubs_that_pass_check_and_make_the_errors_known(tmp_path, capsys):
    out = tmp_path / "local"
    assert main(["patterns", "suggest", RUN_A, RUN_B, str(LOGS / "torchrun_interleaved.log"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "wrote 2 stub(s)" in printed
    text = (out / "suggested.yaml").read_text()
    assert text.startswith("# Pattern stubs from `analyzer patterns suggest` over 3 log(s)")
    stubs = {p["exception"]: p for p in yaml.safe_load(text)["patterns"]}
    transfer = stubs["kvlink.errors.TransferError"]
    assert transfer["template"] == (
        "transfer of request {uuid} to {endpoint} failed after {value1} retries: remote buffer {address} "
        "rejected {value2} bytes for block table {shape} on {device} (deadline {time}, see {path})")
    assert transfer["source"] == {"project": "kvlink", "path": "kvlink/transfer.py", "line": 58,
                                  "function": "transfer_sync"}
    assert len(transfer["examples"]) == 2 and transfer["id"].startswith("local.transfererror.transfer_sync.")
    assert main(["patterns", "check", str(out)]) == 0, capsys.readouterr().out
    assert "2 pattern(s), 4 example(s): ok" in capsys.readouterr().out
    assert main(["scan", "--fail-on", "unknown", "--patterns", str(out), RUN_A, RUN_B]) == 0
    assert main(["scan", "--format", "jsonl", "--patterns", str(out), RUN_B]) == 0
    capsys.readouterr()


def test_suggest_keeps_edited_stubs_unless_forced(tmp_path, capsys):
    (tmp_path / "suggested.yaml").write_text("# edited by hand\n")
    assert main(["patterns", "suggest", RUN_A, "-o", str(tmp_path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert (tmp_path / "suggested.yaml").read_text() == "# edited by hand\n"
    assert main(["patterns", "suggest", "--force", RUN_A, "-o", str(tmp_path)]) == 0
    assert "local.transfererror" in (tmp_path / "suggested.yaml").read_text()


def test_nothing_to_suggest_when_every_error_is_known(tmp_path, capsys):
    assert main(["patterns", "suggest", str(LOGS / "sglang_deepseek_v4_cp_a2a.log"), "-o", str(tmp_path)]) == 0
    assert "nothing to suggest" in capsys.readouterr().out
    assert not (tmp_path / "suggested.yaml").exists()
