"""Errors a log tells without a traceback of their own, in forms a library prints: a retrying library's report
that a call raised and is tried again (tenacity, backoff), and an `exc_info` triple a program printed. Each is
read from its real form (the exceptions raised here, the reports written as the libraries write them), behind the
prefixes real logs put in front of it, by the line path and the fast path alike."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import textwrap
import traceback

import pytest

from analyzer.core.records import EventKind
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.test_fastpath import assert_same
from tests.test_incidents import analysed


class APIConnectionError(Exception):
    """openai<1's class of that name, raised where the client cannot reach the server."""


def _unreachable():
    raise APIConnectionError("Error communicating with OpenAI")


def _shard_missing():
    raise FileNotFoundError(2, "No such file or directory")


def tenacity_retry(fn_name: str, sleep: float, error: BaseException) -> str:
    """tenacity's `before_sleep_log` message for a call that raised (its format: the class's own name, its str, a
    period after it)."""
    return f"Retrying {fn_name} in {sleep} seconds as it raised {error.__class__.__name__}: {error}."


def backoff_report(verb: str, target: str, error: BaseException, wait: float = 0.0, tries: int = 0) -> str:
    """backoff's default handlers: `Backing off f(...) for 0.5s (...)` and `Giving up f(...) after 5 tries (...)`,
    the error as `traceback.format_exception_only` ends it."""
    said = traceback.format_exception_only(type(error), error)[-1].rstrip("\n")
    return (f"Backing off {target}(...) for {wait:.1f}s ({said})" if verb == "back off"
            else f"Giving up {target}(...) after {tries} tries ({said})")


def chatchat_record(message: str, second: int) -> str:
    """Langchain-Chatchat's logging format: `%(asctime)s - %(filename)s[line:%(lineno)d] - %(levelname)s: %(message)s`."""
    record = logging.LogRecord("root", logging.WARNING, "/x/tenacity/before_sleep.py", 65, message, None, None)
    record.created = 1692620042 + second
    record.msecs = 606
    formatter = logging.Formatter("%(asctime)s - %(filename)s[line:%(lineno)d] - %(levelname)s: %(message)s")
    return formatter.format(record)


def _fn_name() -> str:
    return "langchain.chat_models.openai.acompletion_with_retry.<locals>._completion_with_retry"


@pytest.mark.parametrize("style", ["plain", "chatchat", "glued", "quoted"])
def test_a_call_tenacity_retries_tells_its_error_once_for_every_retry(style):
    error = capture(_unreachable)
    said = [tenacity_retry(_fn_name(), sleep, error) for sleep in (4.0, 10.0, 4.0)]
    lines = {"plain": said, "chatchat": [chatchat_record(text, k) for k, text in enumerate(said)],
             "glued": ["Thought:" + text for text in said],  # (an agent's words the warning was printed behind)
             "quoted": ["> " + text for text in said]}[style]
    (incident,) = analysed({"run.log": ["Could not import azure.core python package.", *lines]})
    assert (incident.info.exception_type, incident.info.message) == ("APIConnectionError", "Error communicating with OpenAI")
    assert incident.count == 3 and incident.is_run_root
    assert incident.event.kind is EventKind.NOTICE
    assert incident.event.context.startswith("Retrying ")
    assert assert_same("\n".join([*lines, ""]).encode())


def test_a_retried_error_is_no_root_cause_where_the_run_failed_with_another():
    """The call tried again may have passed: the error the program then died of is the root cause."""
    retried = tenacity_retry(_fn_name(), 4.0, capture(_unreachable))
    fatal = text_of(capture(_shard_missing)).rstrip("\n").split("\n")
    incidents = analysed({"run.log": [retried, retried, *fatal]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert root.info.exception_type == "FileNotFoundError"
    (told,) = [i for i in incidents if i.info.exception_type == "APIConnectionError"]
    assert told.count == 2 and not told.is_run_root


class AsyncIteratorCallbackHandler:
    """A callback handler without the hook the caller asks it for."""


def test_a_retried_error_leads_over_a_classless_one_told_after_it():
    """Two errors each a root cause only where no other is, a call's error tenacity retries and a text whose class
    is inferred (langchain's WARNING that a callback failed, its error's str alone): the first told leads."""
    retried = tenacity_retry(_fn_name(), 4.0, capture(_unreachable))
    handler = AsyncIteratorCallbackHandler()
    hook = capture(lambda: handler.on_retry)  # type: ignore[attr-defined]
    lines = [chatchat_record(retried, 0), chatchat_record(f"Error in {type(handler).__name__}.on_retry callback: {hook}", 1),
             chatchat_record(retried, 4)]
    incidents = analysed({"run.log": lines})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.count) == ("APIConnectionError", 2)
    (callback,) = [i for i in incidents if i is not root]
    assert callback.event.inferred and callback.info.exception_type == "AttributeError"
    assert assert_same("\n".join([*lines, ""]).encode())


def test_backoff_tells_the_error_of_each_try_and_of_the_last():
    error = capture(_unreachable)
    lines = [backoff_report("back off", "fetch", error, wait=0.5), backoff_report("back off", "fetch", error, wait=1.3),
             backoff_report("give up", "fetch", error, tries=3)]
    (incident,) = analysed({"run.log": lines})  # (the tries and the last are one error told three times)
    assert (incident.info.exception_type, incident.info.message) == (f"{__name__}.APIConnectionError",
                                                                    "Error communicating with OpenAI")
    assert incident.count == 3 and incident.is_run_root
    assert assert_same("\n".join([*lines, ""]).encode())


def test_an_exc_info_triple_a_program_printed_is_its_error():
    """`print("thread exception:", sys.exc_info())`: the class, the exception's repr, its traceback object."""
    try:
        _shard_missing()
    except FileNotFoundError:
        info = sys.exc_info()
    printed = ["Token indices sequence length is longer than the specified maximum sequence length for this model",
               f"thread exception: {info}", f"make stop: {info}"]
    (incident,) = analysed({"run.log": printed})
    assert (incident.info.exception_type, incident.info.message) == ("FileNotFoundError",
                                                                    "[Errno 2] No such file or directory")
    assert incident.count == 2 and incident.is_run_root and incident.event.context == "thread exception"
    assert assert_same("\n".join([*printed, ""]).encode())


def test_the_tutorials_f_string_of_an_error_is_that_error():
    """The Python tutorial's `print(f"Unexpected {err=}, {type(err)=}")` of an error caught: its repr, then its class."""
    try:
        _shard_missing()
    except FileNotFoundError as err:
        printed = [f"Unexpected {err=}, {type(err)=}"]
    (incident,) = analysed({"run.log": ["loading the diarization backend", *printed]})
    assert (incident.info.exception_type, incident.info.message) == ("FileNotFoundError",
                                                                    "[Errno 2] No such file or directory")
    assert incident.is_run_root and incident.event.context == "Unexpected"
    assert assert_same("\n".join([*printed, ""]).encode())


def test_words_about_retrying_that_name_no_raised_error_are_no_error():
    lines = ["Retrying request to /v1/chat/completions in 0.4 seconds",  # (openai's own: no error named)
             "Retrying f in 4.0 seconds as it returned None.",  # (tenacity's for a result it retries on)
             "Backing off fetch(...) for 0.5s (None)"]
    assert analysed({"run.log": lines}) == []
    assert assert_same("\n".join([*lines, ""]).encode()) == []


class MilvusException(Exception):
    """pymilvus's error, whose str() is its class and fields in angle brackets."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message

    def __str__(self) -> str:
        return f"<{type(self).__name__}: (code={self.code}, message={self.message})>"


def test_an_errors_str_in_angle_brackets_logged_at_error_level_is_that_error():
    """pymilvus logs `RPC error: [batch_insert], <MilvusException: (code=1100, message=...)>, <Time:{...}>` (logging's basic
    format), then the caller's traceback cut off by the paste: the logged error is the root cause."""
    error = MilvusException(1100, "the dim (2048) of field data(vector) is not equal to schema dim (1024)")
    logged = f"ERROR:pymilvus.decorators:RPC error: [batch_insert], {error}, <Time:{{'RPC start': '2025-01-30 01:16:25'}}>"
    cut = text_of(capture(_unreachable)).split("\n")[:3]
    lines = ['INFO:     172.22.0.5:59212 - "GET /documents HTTP/1.1" 200 OK', logged,
             "ERROR:langchain_community.vectorstores.milvus:Failed to insert batch starting at entity: 0/4", *cut]
    (root,) = [i for i in analysed({"run.log": lines}) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("MilvusException", f"(code=1100, message={error.message})")
    assert assert_same("\n".join([*lines, ""]).encode())


class ExecuteUserScriptError(Exception):
    """sagemaker-containers' error for a training script that exited with an error: its str is its class's name, then
    the command on the next line, then what the command printed, if it was captured (the library's own format)."""

    def __init__(self, cmd: str, output: bytes | None = None) -> None:
        super().__init__()
        self.cmd, self.output = cmd, output

    def __str__(self) -> str:
        printed = f"\n{self.output.decode('latin1')}" if self.output else ""
        return f'{type(self).__name__}:\nCommand "{self.cmd}"{printed}'.strip()


@pytest.mark.parametrize("output", [None, b"Loading data from /opt/ml/input/data/train\nEpoch 1/2"])
def test_sagemakers_error_logged_with_its_type_alone_on_the_records_first_line(output):
    """SageMaker streams the job's log: `sagemaker-containers ERROR    ExecuteUserScriptError:`, the command (and what it
    printed) below, then the SDK's dated status lines: the error is the command's, its message the lines below."""
    command = "/usr/bin/python -m rnn --batch-size 256 --hidden 500, 500"
    record = fmt.logging_padded(str(ExecuteUserScriptError(command, output)))
    assert record[0] == "sagemaker-containers ERROR    ExecuteUserScriptError:"
    lines = ["2019-02-25 14:09:01 Training - Training image download completed.", *record,
             "2019-02-25 14:11:16 Uploading - Uploading generated training model",
             "2019-02-25 14:11:16 Failed - Training job failed"]
    (root,) = [i for i in analysed({"run.log": lines}) if i.is_run_root]
    message = f'Command "{command}"' + (f"\n{output.decode()}" if output else "")
    assert (root.info.exception_type, root.info.message) == ("ExecuteUserScriptError", message)
    assert assert_same("\n".join([*lines, ""]).encode())


@pytest.mark.parametrize("level, kept", [(logging.ERROR, True), (logging.CRITICAL, True), (logging.INFO, False)])
def test_an_error_logged_behind_the_loggers_name_and_its_padded_level(level, kept):
    """`%(name)s %(levelname)-8s %(message)s` (sagemaker-containers' format): an error's text after the padded level
    is that error where the level is an error's."""
    lines = fmt.logging_padded(f"ValueError: {ValueError('--hidden takes one number')}", level=level)
    found = [(e.root.exception_type, e.root.message) for e in assert_same("\n".join([*lines, ""]).encode())]
    assert found == ([("ValueError", "--hidden takes one number")] if kept else [])


def _allocate_scratch():
    raise MemoryError("CUDA out of memory. Tried to allocate 260.00 MiB.")


@pytest.mark.parametrize("level, kept", [("ERROR", True), ("INFO", False)])
def test_an_error_logged_after_a_level_and_colon_padded_behind_a_prefix_nobody_listed(level, kept):
    """`2025-03-14 11:05:29.634 ERROR:    MemoryError: ...` (a time, then uvicorn's padded `LEVEL:`) behind docker
    compose's `svc-1  | `: the error its text names, where the level is an error's."""
    said = traceback.format_exception_only(capture(_allocate_scratch))[-1].rstrip("\n")
    lines = fmt.compose([f"2025-03-14 11:05:29.634 {(level + ':').ljust(9)} {said}"], "tabbyapi-1", width=11)
    found = [(e.root.exception_type, e.root.message) for e in assert_same("\n".join([*lines, ""]).encode())]
    assert found == ([("MemoryError", "CUDA out of memory. Tried to allocate 260.00 MiB.")] if kept else [])


class HydraError(Exception):
    """Stands for Hydra's `CompactHydraException`s: their str is all Hydra prints of them."""


HYDRA_CLOSING = "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."


def hydra_report(error: BaseException, overrides: list[str] | None) -> list[str]:
    """What Hydra writes to stderr when a job fails with an error of its own (`hydra._internal.utils.run_and_report`,
    hydra-core 1.3): the job's overrides where the job ran (`JobReturn.return_value`), the error's str, a blank line,
    then how to see the whole traceback; an error of any other class has its traceback there instead."""
    lines = [f"Error executing job with overrides: {overrides}"] if overrides is not None else []
    if isinstance(error, HydraError):
        lines += str(error).split("\n")
    else:
        lines += text_of(error).rstrip("\n").split("\n")
    return [*lines, "", HYDRA_CLOSING]


def _missing_target():
    raise HydraError("Error locating target 'src.models.mnist_module.MNISTLitModule', see chained exception above."
                     "\nfull_key: model")


def _missing_primary():
    raise HydraError("Cannot find primary config 'train.yaml'. Check that it's in your config search path.\n\n"
                     "Config search path:\n\tprovider=hydra, path=pkg://hydra.conf\n\tprovider=main, path=file:///app/configs")


def _cannot_override():
    raise HydraError("In 'train': Could not override 'trainer.gpus'.\nTo append to your config use +trainer.gpus=2")


@pytest.mark.parametrize("raise_it, overrides, cls", [
    (_missing_target, [], "hydra.errors.InstantiationException"),
    (_missing_primary, None, "hydra.errors.MissingConfigException"),
    (_cannot_override, ["trainer.gpus=2"], "hydra.errors.ConfigCompositionException")])
def test_hydras_short_report_of_its_own_error_is_that_error(raise_it, overrides, cls):
    """Hydra prints an error of its own without its class or traceback, between the job's overrides (where the job
    ran) and its closing line: the error, its class told by the words Hydra opens it with."""
    error = capture(raise_it)
    lines = ["[2022-06-08 08:12:42,395][src.train][INFO] - Instantiating model", *hydra_report(error, overrides)]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    told = str(error).replace("\n\t", "\n")  # (a tab in front of a line reads as a CI viewer's copy: see PASTED)
    assert (event.root.exception_type, event.root.message, event.inferred) == (cls, told, True)


def test_hydras_report_of_another_error_is_its_traceback_and_words_like_hydras_alone_are_no_error():
    """An error of another class comes with its traceback between Hydra's lines: that traceback is the error. Hydra's
    words without its closing line (a program's own `Could not find '...'`) are no error."""
    error = capture(_unreachable)
    (event,) = assert_same("\n".join([*hydra_report(error, ["model=gpt"]), ""]).encode())
    assert (event.kind, event.root.short_type) == (EventKind.TRACEBACK, "APIConnectionError")
    assert assert_same(b"Could not find 'weights.bin'\nDownloading weights.bin\ndone\n") == []
    (bare,) = assert_same(b"Could not find 'weights.bin'\nValueError: no weights\n")  # (nor do they hide an error)
    assert (bare.root.exception_type, bare.root.message) == ("ValueError", "no weights")


def test_python_2s_class_of_an_error_logged_with_its_text():
    """Python 2 printed a built-in class as `<type 'exceptions.KeyError'>` (Elasticsearch Curator's `Failed to complete
    action: snapshot.  <type 'exceptions.KeyError'>: 'creation_date'`, behind its time and a level padded to nine)."""
    error = KeyError("creation_date")
    said = f"Failed to complete action: snapshot.  <type 'exceptions.{type(error).__name__}'>: {error}"
    lines = [f"2016-06-28 11:42:55,960 {'INFO':<9} GET http://es-host:9200/_cluster/state/metadata",
             f"2016-06-28 11:42:55,985 {'ERROR':<9} {said}"]
    found = [(e.root.exception_type, e.root.message) for e in assert_same("\n".join([*lines, ""]).encode())]
    assert found == [("exceptions.KeyError", "'creation_date'")]


class ActorDiedError(Exception):
    """An error whose str() is not its arguments' (Ray's RayActorError): its repr says nothing of its message."""

    def __str__(self) -> str:
        return "The actor died unexpectedly before finishing this task."


async def _listen_stream():
    raise LookupError("no task context")


async def _call_actor():
    raise ActorDiedError()


class RayTaskError(Exception):
    """Ray's error of a remote task; `as_instanceof_cause` makes a class of it and the cause's, named for both, whose
    instance holds the cause."""


async def _engine_step():
    cause = RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    raise type(f"RayTaskError({type(cause).__name__})", (RayTaskError, type(cause)), {})(cause)


def never_retrieved(task=_listen_stream) -> list[logging.LogRecord]:
    """What asyncio's default exception handler logs for a task and a future whose errors nothing retrieved, each
    garbage-collected unawaited in a real event loop."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False

    async def main():
        loop = asyncio.get_running_loop()
        running = loop.create_task(task())
        await asyncio.sleep(0)
        future = loop.create_future()
        future.set_exception(ConnectionResetError(104, "Connection reset by peer"))
        del running, future
        gc.collect()

    try:
        asyncio.run(main())
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    assert [record.getMessage().split("\n")[0] for record in records] == [
        "Task exception was never retrieved", "Future exception was never retrieved"]
    return records


_NEVER_RETRIEVED = [("LookupError", "no task context"), ("ConnectionResetError", "[Errno 104] Connection reset by peer")]


@pytest.mark.parametrize("form", ["message only", "wrapped copy"])
def test_an_error_asyncio_says_nothing_retrieved_is_named_by_the_futures_repr(form):
    """A formatter that leaves the traceback out (or a copy of the record's first lines) keeps asyncio's words and the
    future's repr: `exception=` and the error's repr name it. A copy may wrap the repr over lines, dropping the blank
    it broke each at (`defined at/usr/...`), and put a blank line under the words."""
    lines: list[str] = ["INFO:     Started server process [7]"]
    for record in never_retrieved():
        said, future = record.getMessage().split("\n")
        wrapped = textwrap.wrap(future, 60, break_on_hyphens=False, break_long_words=False) if form == "wrapped copy" else [future]
        lines += [f"ERROR:asyncio:{said}", *([""] if form == "wrapped copy" else []), *wrapped]
    events = assert_same("\n".join([*lines, ""]).encode())
    assert [(e.root.exception_type, e.root.message) for e in events] == _NEVER_RETRIEVED
    assert [e.context for e in events] == ["Task exception was never retrieved", "Future exception was never retrieved"]
    assert all(e.kind is EventKind.NOTICE and not e.truncated for e in events)


@pytest.mark.parametrize("form", ["%(asctime)s %(levelname)s %(name)s %(message)s", "%(message)s"])
def test_an_error_asyncio_says_nothing_retrieved_is_its_traceback_where_the_record_has_one(form):
    """logging's own format puts the traceback (or, for an error never raised, its exception line) under the repr:
    that is the error, once. (Without a prefix, asyncio's words of the next record end the message above them.)"""
    formatter = logging.Formatter(form)
    task, future = (formatter.format(record).split("\n") for record in never_retrieved())
    events = assert_same("\n".join([*task, *future, ""]).encode())
    assert [(e.root.exception_type, e.root.message) for e in events] == _NEVER_RETRIEVED
    assert events[0].kind is EventKind.TRACEBACK and events[0].root.frames[-1].function == "_listen_stream"
    assert events[0].span.line_start == 2  # (from the repr, the error's record)
    # (the traceback cut before its exception line: the repr names the error)
    (cut,) = assert_same("\n".join([*task[:-1], ""]).encode())
    assert (cut.root.exception_type, cut.root.message, cut.root.frames[-1].function) == (*_NEVER_RETRIEVED[0], "_listen_stream")
    assert cut.truncated  # (asyncio prints the whole traceback under the repr)


class MessageNotModified(Exception):  # (named as aiogram's is: a class whose name says no error)
    pass


async def _edit_message():
    raise MessageNotModified("Message is not modified: specified new message content and reply markup are the same")


def test_a_futures_repr_names_an_error_whose_class_does_not_say_so_where_its_traceback_was_cut():
    """`exception=MessageNotModified('...')`: what asyncio's repr holds there is an exception whatever its class is
    called; under it a traceback a copy cut inside its stack (above the raise statement, which would name it) is that
    error (it was a fragment with no type)."""
    formatter = logging.Formatter("%(levelname)s:%(name)s:%(message)s")
    task = formatter.format(never_retrieved(_edit_message)[0]).split("\n")
    innermost = max(k for k, line in enumerate(task) if line.startswith("  File "))
    (cut,) = assert_same("\n".join([*task[:innermost], ""]).encode())
    assert (cut.root.exception_type, cut.root.message) == (
        "MessageNotModified", "Message is not modified: specified new message content and reply markup are the same")
    assert cut.truncated


def test_a_futures_repr_of_a_wrapper_made_of_its_cause_names_the_causes_words():
    """Ray's `RayTaskError(RuntimeError)` holds the cause it was made of: asyncio's repr of it, `exception=RayTaskError(
    RuntimeError)(RuntimeError('...'))`, above a traceback a copy cut, is that class with the cause's words."""
    formatter = logging.Formatter("%(asctime)s | %(levelname)s | %(name)s | %(message)s")
    lines = formatter.format(never_retrieved(_engine_step)[0]).split("\n")
    assert "exception=RayTaskError(RuntimeError)(RuntimeError('probability tensor" in lines[1]
    (event,) = assert_same("\n".join([*lines[:-1], ""]).encode())
    assert (event.root.exception_type, event.root.message, event.truncated) == (
        "RayTaskError(RuntimeError)", "probability tensor contains either `inf`, `nan` or element < 0", True)


def test_a_futures_repr_that_names_an_errors_class_alone_above_its_traceback_is_that_error():
    """`exception=ActorDiedError()`: the repr of an error whose message is its own str(), behind a Ray worker's prefix."""
    formatter = logging.Formatter("%(message)s")
    lines = [f"(ServeReplica pid=97598) {line}" for line in formatter.format(never_retrieved(_call_actor)[0]).split("\n")]
    assert lines[1].endswith("exception=ActorDiedError()>")
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.short_type, event.root.message, event.span.line_start) == ("ActorDiedError", str(ActorDiedError()), 2)


def test_a_futures_repr_that_names_no_error_or_is_cut_is_no_error():
    lines = ["Task was destroyed but it is pending!",
             "future: <Task pending name='Task-4' coro=<poll() running at /srv/app.py:12> wait_for=<Future pending cb=[Task.task_wakeup()]>>",
             "Task exception was never retrieved",  # (a copy cut inside the repr: no telling its error)
             "future: <Task finished name='Task-9' coro=<Worker.listen() done,",
             "2024-05-01 10:00:02,000 INFO shutting down"]
    assert assert_same("\n".join([*lines, ""]).encode()) == []


def _connect_to_postgres():
    raise ConnectionError('could not connect to server: Connection refused\n\tIs the server running on host "10.0.0.7" '
                          'and accepting\n\tTCP/IP connections on port 5432?\n')


def test_celerys_record_of_a_tasks_error_and_its_traceback_are_one_error():
    """Celery's worker logs `Task name[id] raised unexpected: %r` with the traceback below (its own format): one error,
    whose words are the record's, its record ended by the worker's next one; its repr's line breaks are its message's."""
    error = capture(_connect_to_postgres)
    said = "Task tasks.analyze[ace75c29-1760-430f-8d16-b628f5add701] raised unexpected"
    lines = [*fmt.celery(f"{said}: {error!r}", error),
             *fmt.celery("Task tasks.add[0b1e] succeeded in 0.01s: 3", level=logging.INFO, process="ForkPoolWorker-1")]
    (incident,) = analysed({"worker.log": lines})
    assert (incident.info.exception_type, incident.info.message.split()) == ("ConnectionError", str(error).split())
    assert incident.event.context == said and incident.event.timestamp == fmt.T0.replace(microsecond=123000)
    assert (incident.event.span.line_start, incident.event.span.line_end) == (1, len(lines) - 2)  # (less the blank line
    # the message ended with)
    assert [(e.root.exception_type, e.span.line_start) for e in assert_same("\n".join([*lines, ""]).encode())] == [
        ("ConnectionError", 1)]
    # (its traceback from another channel, cut before its exception line: the record tells the error, whole)
    cut = [f"worker_1  | {line}" for line in text_of(error).split("\n")[:-5]]
    (root,) = [i for i in analysed({"worker.log": [fmt.celery(f"{said}: {error!r}")[0], *cut]}) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("ConnectionError", str(error))
