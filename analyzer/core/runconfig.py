"""The run's own configuration, read from the lines a server logs about itself.

SGLang prints its resolved arguments once at launch (`server_args=ServerArgs(model_path='...',
tp_size=8, mem_fraction_static=0.88, ...)`); vLLM its engine config (`Initializing a V1 LLM engine
(v0.8.5) with config: model='...', ...`, older `Initializing an LLM engine (v0.6.4) ...`) and the
arguments the user changed (`non-default args: {'model': '...', 'gpu_memory_utilization': 0.95}`);
and many pasted logs hold the launch command (`python -m sglang.launch_server --model-path ... --tp 8`,
`vllm serve MODEL --gpu-memory-utilization 0.9`), maybe continued over lines ending in `\\`.

`RunConfigCollector.feed` takes the text of each line (prefixes may be left on) and keeps what it
learns; `RunConfig` is the typed result. Settings are keyed by the server's attribute names
(`mem_fraction_static`, `gpu_memory_utilization`), whatever alias the command used (`--tp`).
Pure: no I/O.
"""

from __future__ import annotations

import enum
import re
import shlex
from dataclasses import dataclass
from typing import Any

from analyzer.core.literal import literal

__all__ = [
    "LaunchCommand",
    "RunConfig",
    "RunConfigCollector",
    "Server",
    "attribute_of_flag",
    "join_words",
    "parse_launch_command",
    "run_config_from_lines",
    "typed",
]


class Server(enum.Enum):
    SGLANG = "sglang"
    VLLM = "vllm"


# Flags whose attribute is not their long name with `-` turned into `_`.
_ALIASES = {
    Server.SGLANG: {"tp": "tp_size", "tensor_parallel_size": "tp_size", "dp": "dp_size", "data_parallel_size": "dp_size",
                    "pp": "pp_size", "pipeline_parallel_size": "pp_size", "ep": "ep_size",
                    "expert_parallel_size": "ep_size", "model": "model_path"},
    Server.VLLM: {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size", "dp": "data_parallel_size",
                  "q": "quantization", "model_tag": "model", "max_seq_len": "max_model_len"},
}
_MODEL_KEY = {Server.SGLANG: "model_path", Server.VLLM: "model"}

_SERVER_ARGS = re.compile(r"\bserver_args=ServerArgs\(")
_VLLM_ENGINE = re.compile(r"Initializing (?:a V1 LLM engine|an LLM engine) \(v(?P<version>[^)\s]+)\) with config: ")
_VLLM_NON_DEFAULT = re.compile(r"\bnon-default args: (?=\{)")
_VLLM_VERSION = re.compile(r"\bvLLM API server version (?P<version>\d[\w.+-]*)")
_PATH_VERSION = re.compile(r"/(?P<server>sglang|vllm)-(?P<version>\d+\.\d+\.\d+(?:\.post\d+)?)/")
# An install pin or an image tag: `sglang[all]==0.4.6.post1`, `vllm==0.8.3`, `lmsysorg/sglang:v0.4.6-cu124`
_PIN_VERSION = re.compile(r"(?<![\w-])(?P<server>sglang|vllm)(?:\[[\w,]+\]|-openai)?(?:==|:v)"
                          r"(?P<version>\d+\.\d+(?:\.\d+)*(?:\.?(?:post|rc)\d+)?)")
# The program part of a launch command: what comes before its flags.
# (a path or a variable's value holds none of the characters a program may follow: read from each of a long run of them,
# a path of any characters went on to the run's end, the square of its length in all)
_PROGRAM = re.compile(
    r"(?:^|(?<=[\s;&|$#>(]))(?:[A-Za-z_][A-Za-z0-9_]*=[^\s;&|$#>(]*\s+)*"
    r"(?:(?:[^\s;&|$#>(]*/)?python(?:3(?:\.\d+)?)?\s+(?:-\S+\s+)*-m\s+(?P<module>sglang\.launch_server|vllm\.entrypoints\.openai\.api_server)"
    r"|(?:[^\s;&|$#>(]*/)?(?P<cli>vllm|sglang)\s+serve)(?=\s|$)")
_ELLIPSIS = ("...", "…")
# Without a configuration line, the first frame or worker tag of a server tells which one ran.
_SERVER_HINT = re.compile(r'File "[^"]*/(?P<frame>sglang|vllm)/|\((?P<worker>VllmWorker|EngineCore)\w* ')

_MAX_COMMAND = 128 * 1024  # characters of a launch command continued over lines, at most
# What a line must hold for `feed` to take settings or a command from it, a hint, a version from a path.
_KEYS = ("ServerArgs(", "LLM engine", "non-default args", "server version", " serve", "launch_server", "api_server")
_HINT_KEYS = ("/sglang/", "/vllm/", "(VllmWorker", "(EngineCore")
_PATH_VERSION_KEYS = ("/sglang-", "/vllm-")


@dataclass(frozen=True, slots=True)
class LaunchCommand:
    """A launch command as the log shows it, split into words; `flags_at` is where its flags begin."""

    server: Server
    words: tuple[str, ...]
    flags_at: int

    @property
    def text(self) -> str:
        return join_words(self.words)


@dataclass(frozen=True, slots=True)
class RunConfig:
    server: Server | None = None
    version: str | None = None
    model: str | None = None
    settings: tuple[tuple[str, Any], ...] = ()  # attribute -> value, typed where the log shows a literal
    command: LaunchCommand | None = None

    def get(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.settings if key == name), default)

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.settings)

    @property
    def known(self) -> bool:
        return self.server is not None or bool(self.settings) or self.command is not None


class RunConfigCollector:
    """Feed it the lines of one run's log; `config` is what they told so far (later lines win)."""

    def __init__(self) -> None:
        self._server: Server | None = None
        self._version: str | None = None
        self._settings: dict[str, Any] = {}
        self._from_command: dict[str, Any] = {}
        self._command: LaunchCommand | None = None
        self._continued: str | None = None  # a launch command whose last line ended in `\`
        self._hinted: Server | None = None
        self._pins: dict[Server, str] = {}  # versions pinned or tagged by install and launch lines
        self._image: Server | None = None  # the server whose image a launch line runs

    def feed(self, text: str) -> None:
        # (a line that this reads anew must hold one of the keys `unchanged_by` looks for: keep them in step)
        text = text.rstrip("\r\n")
        if self._continued is not None:
            self._continued += " " + text.strip().removesuffix("\\")
            # (a command longer than any shell takes is not one going on: line after line ending in `\`)
            if not text.rstrip().endswith("\\") or len(self._continued) > _MAX_COMMAND:
                self._take_command(self._continued)
                self._continued = None
            return
        if "ServerArgs(" in text and (found := _SERVER_ARGS.search(text)):
            self._take(Server.SGLANG, _keyword_pairs(text, found.end(), ")"))
        elif "LLM engine" in text and (found := _VLLM_ENGINE.search(text)):
            self._version = found["version"]
            self._take(Server.VLLM, _keyword_pairs(text, found.end(), ""))
        elif "non-default args" in text and (found := _VLLM_NON_DEFAULT.search(text)):
            self._take(Server.VLLM, _dict_pairs(text[found.end():]))
        elif "server version" in text and (found := _VLLM_VERSION.search(text)):
            self._server, self._version = Server.VLLM, found["version"]
        elif (" serve" in text or "launch_server" in text or "api_server" in text) and _PROGRAM.search(text):
            if text.rstrip().endswith("\\"):
                self._continued = text.rstrip().removesuffix("\\")
            else:
                self._take_command(text)
        if self._hinted is None and ('File "' in text or "pid=" in text) and (found := _SERVER_HINT.search(text)):
            self._hinted = Server.VLLM if found["worker"] else Server(found["frame"])
        if self._version is None and "/" in text and (found := _PATH_VERSION.search(text)):
            self._version = found["version"]
            self._server = self._server or Server(found["server"])
        if ("==" in text or ":v" in text) and (found := _PIN_VERSION.search(text)):
            # a pin names a release, not the server that runs: SGLang once installed a pinned vLLM
            self._pins.setdefault(Server(found["server"]), found["version"])
            if ":v" in found[0]:
                self._image = self._image or Server(found["server"])

    @property
    def continuing(self) -> bool:
        """A launch command's last line ended in `\\`: the next line goes on with it."""
        return self._continued is not None

    def unchanged_by(self, texts: list[str]) -> bool:
        """Whether feeding `texts` would surely change nothing (looked for in them all at once: a
        hint that is not one only costs the caller feeding them one by one)."""
        joined = "\n".join(texts)
        return (self._continued is None and not any(key in joined for key in _KEYS)
                and (self._hinted is not None or not any(key in joined for key in _HINT_KEYS))
                and (self._version is not None or not any(key in joined for key in _PATH_VERSION_KEYS))
                and not (("==" in joined or ":v" in joined) and _PIN_VERSION.search(joined)))

    @property
    def config(self) -> RunConfig:
        server = self._server or (self._command.server if self._command else None) or self._hinted or self._image
        command = self._command if self._command and self._command.server is server else None  # another run's
        settings = {**(self._from_command if command else {}), **self._settings}
        model = settings.get(_MODEL_KEY[server]) if server else None
        version = self._version or (self._pins.get(server) if server else None)
        return RunConfig(server, version, str(model) if model is not None else None,
                         tuple(settings.items()), command)

    def _take(self, server: Server, pairs: list[tuple[str, Any]]) -> None:
        if self._server is not server:
            self._settings = {}  # another server's configuration: a new run
        self._server = server
        aliases = _ALIASES[server]
        for key, value in pairs:
            self._settings[aliases.get(key, key)] = value

    def _take_command(self, text: str) -> None:
        command = parse_launch_command(text)
        if command is None:
            return
        self._command = command
        self._from_command = dict(_command_settings(command))


def run_config_from_lines(lines) -> RunConfig:
    collector = RunConfigCollector()
    for line in lines:
        collector.feed(line)
    return collector.config


def parse_launch_command(text: str) -> LaunchCommand | None:
    """The launch command in a line, or None; a command cut short (`...`) is not one to copy."""
    found = _PROGRAM.search(text)
    if found is None:
        return None
    program = found.group(0)
    server = Server.SGLANG if "sglang" in (found["module"] or found["cli"] or "") else Server.VLLM
    try:
        words = shlex.split(text[found.start():], comments=False)
    except ValueError:  # an unclosed quote: the line was cut
        return None
    if any(word in _ELLIPSIS or word.endswith(_ELLIPSIS) for word in words):
        return None
    return LaunchCommand(server, tuple(words), len(program.split()))


def attribute_of_flag(flag: str, server: Server) -> str:
    """`--tp` -> `tp_size` (SGLang); `--gpu-memory-utilization` -> `gpu_memory_utilization`."""
    name = flag.lstrip("-").split("=", 1)[0].replace("-", "_")
    return _ALIASES[server].get(name, name)


def join_words(words) -> str:
    """Words back into a command line, quoting only what the shell would split (`$VAR` stays as typed)."""
    return " ".join(word if word and not re.search(r"[\s'\"\\]", word) else shlex.quote(word) for word in words)


def _command_settings(command: LaunchCommand):
    words = command.words[command.flags_at:]
    model_key = _MODEL_KEY[command.server]
    index = 0
    if command.server is Server.VLLM and words and not words[0].startswith("-"):
        yield model_key, words[0]  # `vllm serve MODEL`
        index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("-") or word == "-":
            continue
        name, has_value, value = word.partition("=")
        if not has_value:
            if index < len(words) and not _is_flag(words[index]):
                value, index = words[index], index + 1
            else:
                yield attribute_of_flag(name, command.server), True
                continue
        yield attribute_of_flag(name, command.server), _word_value(value)


def _word_value(word: str) -> Any:
    """A command-line value: a number where it is one, else the word as typed (`0,1` stays text)."""
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            pass
    return word


def _is_flag(word: str) -> bool:
    return word.startswith("-") and not re.fullmatch(r"-\d[\d.e-]*", word)


def typed(text: str) -> Any:
    """A word or a repr as the value it stands for: `0.8` -> 0.8, `'x'` -> 'x', `auto` -> 'auto'."""
    try:
        return literal(text)
    except ValueError:
        return text


def _keyword_pairs(text: str, start: int, closer: str) -> list[tuple[str, Any]]:
    """`key=value, key=value` from `start` to the `closer` that ends the list (or the line's end)."""
    return [(key.strip(), typed(value.strip())) for key, value in
            (item.split("=", 1) for item in _top_level_items(text, start, closer) if "=" in item)
            if key.strip().isidentifier()]


def _dict_pairs(text: str) -> list[tuple[str, Any]]:
    value = typed(text.strip())
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    items = _top_level_items(text, 1, "}")  # a value that is no literal (an object's repr): item by item
    return [(typed(key.strip()), typed(value.strip())) for key, value in
            (item.split(":", 1) for item in items if ":" in item) if isinstance(typed(key.strip()), str)]


_OPEN = {"(": ")", "[": "]", "{": "}"}


def _top_level_items(text: str, start: int, closer: str) -> list[str]:
    """Split at the commas outside brackets and quotes, up to the unmatched `closer`."""
    items: list[str] = []
    depth: list[str] = []
    quote = ""
    begin = index = start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            depth.append(_OPEN[char])
        elif depth and char == depth[-1]:
            depth.pop()
        elif not depth and char == closer:
            break
        elif not depth and char == ",":
            items.append(text[begin:index])
            begin = index + 1
        index += 1
    items.append(text[begin:index])
    return [item for item in items if item.strip()]

