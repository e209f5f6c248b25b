"""A corpus of foreign errors: real exceptions raised outside SGLang, in realistic tracebacks.

Every case is raised for real, by a call into CPython's standard library, numpy, pandas, PyYAML,
json, regex and other installed packages, or by a user's own script (the `'NoneType' object has no
attribute ...` kind), and formatted by `traceback` behind a user script's frames. None of them is an
SGLang error, so any SGLang pattern they match is a wrong diagnosis.

`extracted_cases` adds messages the project's own extractor finds in other installed packages, each
raised from a frame at its real site (`site-packages/<package>/<path>.py`, its line and function).
"""

from __future__ import annotations

import ast
import base64
import datetime
import decimal
import fractions
import functools
import importlib
import ipaddress
import json
import linecache
import math
import operator
import os
import random
import statistics
import struct
import traceback
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import regex
import yaml

from fixtures.generate import Frame, foreign_exception, formatted

USER_SCRIPT = "/home/user/project/train.py"


@dataclass(frozen=True)
class Case:
    name: str
    text: str  # the formatted traceback


def _user_frames_call(op: Callable[[], object], line: int) -> BaseException:
    """Run `op` from a function in the user's script, so the traceback starts there."""
    source = "\n" * (line - 2) + "def main():\n    __op__()\n"
    code = "    batch = run_step(config)"
    lines = [""] * (line - 1) + [code + "\n"]
    linecache.cache[USER_SCRIPT] = (len("".join(lines)), None, lines, USER_SCRIPT)
    namespace: dict[str, object] = {"__op__": op}
    exec(compile(source, USER_SCRIPT, "exec"), namespace)  # our own stub
    try:
        namespace["main"]()  # type: ignore[operator]
    except Exception as err:  # every case raises on purpose
        return err
    raise AssertionError(f"{op} did not raise")


def _text(err: BaseException) -> str:
    te = traceback.TracebackException.from_exception(err)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != __file__])
    return "".join(te.format())


def _user_raise(exc: BaseException) -> Callable[[], object]:
    def op() -> object:
        raise exc
    return op


def _none_attr(name: str) -> Callable[[], object]:
    return lambda: getattr(None, name)


# Families of real calls that fail, each with a few argument values (numbers, shapes, names).
def _operations() -> Iterator[tuple[str, Callable[[], object]]]:
    for text in ("{", "[1, 2", '{"a": }', "nul", "'single'", "1e", "[1,]"):
        yield f"json.loads {text}", functools.partial(json.loads, text)
    for text in ("abc", "1.5", "", "0x1G", "12 34"):
        yield f"int {text!r}", functools.partial(int, text)
    for text in ("abc", "1,5", "--1"):
        yield f"float {text!r}", functools.partial(float, text)
    for key in ("model_path", "tp_size", "lr", "seed"):
        yield f"dict key {key}", functools.partial(operator.getitem, {"batch_size": 8}, key)
    for index in (3, 10, -9):
        yield f"list index {index}", functools.partial(operator.getitem, [1, 2, 3], index)
    for value in (-1.0, -4.0):
        yield f"sqrt {value}", functools.partial(math.sqrt, value)
    yield "log 0", functools.partial(math.log, 0)
    for path in ("/data/missing.bin", "/etc/nope/config.yaml", "relative/weights.pt"):
        yield f"open {path}", functools.partial(open, path)
        yield f"listdir {path}", functools.partial(os.listdir, path)
    for text, fmt in (("2024-13-01", "%Y-%m-%d"), ("yesterday", "%Y-%m-%d"), ("10:61", "%H:%M")):
        yield f"strptime {text}", functools.partial(datetime.datetime.strptime, text, fmt)
    for pattern in ("(unclosed", "[a-", "*start", "a{2,1}"):
        yield f"regex {pattern}", functools.partial(regex.compile, pattern)
    for fmt, data in (("<i", b"\x00"), ("<q", b"abc"), (">H", b"")):
        yield f"struct {fmt}", functools.partial(struct.unpack, fmt, data)
    for text in ("abc", "a===", "!!!!"):
        yield f"b64 {text}", functools.partial(base64.b64decode, text, validate=True)
    for text in ("1.2.3", "abc"):
        yield f"decimal {text}", functools.partial(decimal.Decimal, text)
    yield "fraction zero", functools.partial(fractions.Fraction, 1, 0)
    for text in ("300.1.1.1", "10.0.0", "::g"):
        yield f"ip {text}", functools.partial(ipaddress.ip_address, text)
    for text in ("not-a-uuid", "1234"):
        yield f"uuid {text}", functools.partial(uuid.UUID, text)
    for data in ([], ()):
        yield f"mean {data!r}", functools.partial(statistics.mean, data)
    yield "reduce empty", functools.partial(functools.reduce, operator.add, [])
    for module in ("flash_attn", "vllm_flash_attn", "deep_gemm", "sgl_kernel_missing"):
        yield f"import {module}", functools.partial(importlib.import_module, module)
    yield "zip bad", functools.partial(zipfile.ZipFile, __file__)
    for text in ("x = (", "def f(:", "1 +"):
        yield f"literal_eval {text}", functools.partial(ast.literal_eval, text)
    yield "random choice", functools.partial(random.choice, [])
    yield "sample too many", functools.partial(random.sample, [1, 2], 5)
    for a, b in ((1, 0), (5.0, 0.0), (3, 0)):
        yield f"div {a}/{b}", functools.partial(operator.truediv, a, b)
    for a, b in ((1, "a"), ("a", 2.5), (None, 1), ([1], 1)):
        yield f"add {a!r}+{b!r}", functools.partial(operator.add, a, b)
    for name in ("shape", "cpu", "to", "size", "dtype", "device", "item", "numpy", "items", "get", "split",
                 "encode", "keys", "append", "weight", "forward", "config", "state_dict", "eval", "tokenizer"):
        yield f"None.{name}", _none_attr(name)
    for shape, new in (((6,), (4,)), ((2, 3), (4, 2)), ((10,), (3, 3)), ((8, 4), (3, -1))):
        yield f"reshape {shape}->{new}", lambda s=shape, n=new: np.zeros(s).reshape(n)
    for a, b in (((2, 3), (2, 3)), ((4, 5), (4, 5)), ((3,), (4,))):
        yield f"matmul {a}@{b}", lambda a=a, b=b: np.ones(a) @ np.ones(b)
    for a, b in (((2, 3), (3, 2)), ((5,), (4,)), ((2, 2, 2), (3, 1, 1))):
        yield f"broadcast {a}+{b}", lambda a=a, b=b: np.ones(a) + np.ones(b)
    for index in (5, 100, -7):
        yield f"np index {index}", lambda i=index: np.arange(3)[i]
    for dtype in ("float8", "bfloat17", "int3", "fp4"):
        yield f"np dtype {dtype}", functools.partial(np.dtype, dtype)
    yield "np singular", lambda: np.linalg.inv(np.zeros((3, 3)))
    yield "np concat", lambda: np.concatenate([np.ones((2, 3)), np.ones((2, 4))])
    yield "np negative dims", functools.partial(np.zeros, (-1, 3))
    yield "np ragged", lambda: np.array([[1, 2], [3]], dtype=float)
    yield "np load", functools.partial(np.load, "/data/missing.npy")
    yield "np astype", lambda: np.array(["a", "b"]).astype(float)
    yield "np choice", lambda: np.random.default_rng(0).choice(3, 5, replace=False)
    yield "np split", lambda: np.split(np.arange(7), 3)
    frame = pd.DataFrame({"prompt": ["a", "b"], "tokens": [1, 2]})
    for column in ("response", "label", "score"):
        yield f"pd column {column}", lambda c=column: frame[c]
    yield "pd iloc", lambda: frame.iloc[10]
    yield "pd truth", lambda: bool(frame["tokens"] > 1)
    yield "pd to_datetime", functools.partial(pd.to_datetime, "not a date")
    yield "pd read_csv", functools.partial(pd.read_csv, "/data/missing.csv")
    yield "pd astype", lambda: pd.Series([1.0, float("nan")]).astype(int)
    yield "pd merge", lambda: frame.merge(frame, on="missing")
    yield "pd concat", lambda: pd.concat([])
    yield "pd set_index", lambda: frame.set_index("missing")
    yield "pd pivot", lambda: pd.DataFrame({"a": [1, 1], "b": [1, 1], "c": [1, 2]}).pivot(index="a", columns="b")
    yield "pd drop", lambda: frame.drop(columns=["missing"])
    yield "pd loc", lambda: frame.loc[99]
    yield "pd rename", lambda: frame.rename(columns={"missing": "x"}, errors="raise")
    yield "pd period", functools.partial(pd.Period, "2024-99")
    yield "pd timedelta", functools.partial(pd.Timedelta, "five minutes")
    for text in ("a: [1, 2", "key: : value", "- a\n b: c", "{unclosed", "a: b: c", "\tkey: v"):
        yield f"yaml {text!r}", functools.partial(yaml.safe_load, text)
    yield "yaml tag", functools.partial(yaml.safe_load, "!!python/object:os.system x")
    yield "yaml dump", functools.partial(yaml.safe_dump, object())
    for key in ("HF_TOKEN", "MASTER_ADDR", "CUDA_VISIBLE_DEVICES_X", "WORLD_SIZE_X"):
        yield f"environ {key}", functools.partial(operator.getitem, os.environ, key)
    for year, month, day in ((2024, 2, 30), (2023, 13, 1), (2024, 4, 31)):
        yield f"date {year}-{month}-{day}", functools.partial(datetime.date, year, month, day)
    for values in ([1, 2, 3], [1]):
        yield f"unpack {values}", lambda v=values: operator.itemgetter(0)(_unpack_two(v))
    for item in ("x", 7, None):
        yield f"list remove {item!r}", functools.partial(list.remove, [1, 2], item)
        yield f"list index {item!r}", functools.partial(list.index, [1, 2], item)
        yield f"set remove {item!r}", functools.partial(set.remove, {1, 2}, item)
    for data in (b"\xff\xfe\xfa", b"\xc3\x28", b"abc\x80"):
        yield f"utf8 {data!r}", functools.partial(bytes.decode, data, "utf-8")
    for encoding in ("utf-9", "latin-42"):
        yield f"encoding {encoding}", functools.partial(str.encode, "abc", encoding)
    yield "format index", functools.partial(str.format, "{} and {}", 1)
    yield "format key", functools.partial(str.format, "{name}")
    yield "percent type", functools.partial(operator.mod, "%d tokens", "x")
    yield "percent args", functools.partial(operator.mod, "%s and %s", ("a",))
    for value in (-1, 0x110000):
        yield f"chr {value}", functools.partial(chr, value)
    yield "bytes range", functools.partial(bytes, [300])
    yield "range float", functools.partial(range, 1.5)
    yield "pow zero", functools.partial(pow, 0, -1)
    yield "dumps set", functools.partial(json.dumps, {1, 2})
    yield "dumps nan", functools.partial(json.dumps, float("nan"), allow_nan=False)
    yield "open dir", functools.partial(open, "/tmp")
    for name in ("hidden_size", "num_layers", "vocab", "rope_theta"):
        yield f"attr {name}", functools.partial(getattr, _Config(), name)
    for shape, new in (((12,), (5, 2)), ((3, 4), (5,)), ((2, 2), (3,))):
        yield f"resize {shape}->{new}", lambda s=shape, n=new: np.ones(s).reshape(n)
    for axis in (2, 5):
        yield f"np axis {axis}", lambda a=axis: np.ones((2, 3)).sum(axis=a)
    for text in ("abc", "1.2.3"):
        yield f"np float {text}", functools.partial(np.float32, text)
    for column in ("answer", "reward", "id"):
        yield f"pd groupby {column}", lambda c=column: frame.groupby(c)
    for label in ("z", 42):
        yield f"pd at {label!r}", lambda lab=label: frame.at[lab, "prompt"]


class _Config:
    """A user's own config object, missing the attribute a script asks for."""

    model_path = "/models/llama"


def _unpack_two(values: list[int]) -> tuple[int, int]:
    first, second = values
    return first, second


# Messages users' own scripts raise, the kind a short SGLang template also fits.
_USER_MESSAGES = [
    (ValueError, "batch_size must be positive, got -1"), (ValueError, "Unsupported dtype: float8"),
    (ValueError, "Invalid model path: /models/llama"), (ValueError, "Expected 2 GPUs, got 1"),
    (RuntimeError, "CUDA is not available"), (NotImplementedError, ""), (ValueError, "Unknown backend: xla"),
    (KeyError, "'input_ids'"), (TypeError, "expected str, got int"), (ValueError, "invalid literal"),
    (AssertionError, ""), (RuntimeError, "Timeout"), (ValueError, "Not supported"), (ValueError, "max_tokens"),
    (RuntimeError, "Model not found: meta-llama/Llama-3-8B"), (ValueError, "tp_size must be a power of 2"),
    (ValueError, "Invalid quantization method: awq-int3"), (RuntimeError, "Failed to load weights"),
    (ValueError, "Unsupported model architecture: MyForCausalLM"), (ValueError, "world_size must be > 0"),
    (FileNotFoundError, "config.json not found"), (ValueError, "temperature must be non-negative, got -0.5"),
    (ValueError, "top_p must be in (0, 1], got 1.5"), (RuntimeError, "NCCL error"),
    (ValueError, "Invalid port: 99999"), (ValueError, "The number of GPUs must be divisible by tp_size"),
    (RuntimeError, "out of memory"), (ValueError, "Unsupported attention backend: sdpa2"),
    (ValueError, "context length must be at least 1"), (TypeError, "'NoneType' object is not iterable"),
    (ValueError, "Unknown device: npu"), (ValueError, "chunk size must be positive"),
    (ValueError, "Invalid value for --dtype: half2"), (RuntimeError, "Process group is not initialized"),
    (ValueError, "Expected a list of prompts"), (KeyError, "'attention_mask'"), (ValueError, "Unknown model type"),
    (RuntimeError, "Dataset is empty"), (ValueError, "num_workers must be >= 0"),
    (IndexError, "list index out of range"),
    (ValueError, "Invalid JSON in request body"), (RuntimeError, "Checkpoint is corrupted"),
    (ValueError, "Unsupported image format: webp"), (ValueError, "Unsupported audio format: flac"),
    (ValueError, "max_new_tokens must be greater than 0"), (RuntimeError, "Server is not ready"),
    (ValueError, "stop must be a string or a list of strings"), (ValueError, "Invalid LoRA path"),
    (TypeError, "unsupported operand type(s) for +: 'int' and 'str'"), (ValueError, "too many values to unpack"),
    (ValueError, "Unsupported quantization: gptq"), (RuntimeError, "Expected tensor on cuda, got cpu"),
]

# Errors raised inside other libraries' files, as they print there (type, message, package path).
_LIBRARY_RAISES = [
    ("torch", "RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, "
     "cuda:0 and cpu!", "torch/nn/functional.py", 2573, "embedding"),
    ("torch", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x1024 and 4096x1024)",
     "torch/nn/modules/linear.py", 125, "forward"),
    ("torch", "ValueError", "Unsupported dtype: torch.float8_e4m3fn", "torch/_tensor.py", 1400, "to"),
    ("vllm", "ValueError", "Attempted to assign 1 x 576 = 576 multimodal tokens to 577 placeholders",
     "vllm/model_executor/models/utils.py", 480, "_merge_multimodal_embeddings"),
    ("vllm", "AssertionError", "", "vllm/model_executor/layers/linear.py", 1030, "weight_loader",
     "        assert param_data.shape == loaded_weight.shape"),
    ("vllm", "ValueError", "batch_size must be positive, got -1", "vllm/engine/arg_utils.py", 900,
     "create_engine_config"),
    ("transformers", "ValueError", "Unrecognized configuration class <class 'MyConfig'> for this kind of AutoModel",
     "transformers/models/auto/auto_factory.py", 567, "from_pretrained"),
    ("transformers", "OSError", "Can't load tokenizer for 'meta-llama/Llama-3'.",
     "transformers/tokenization_utils_base.py", 2016, "from_pretrained"),
    ("flashinfer", "RuntimeError", "Unsupported head_dim: 96", "flashinfer/decode.py", 610, "plan"),
    ("triton", "RuntimeError", "Triton Error [CUDA]: invalid argument", "triton/compiler/compiler.py", 400, "run"),
]


def real_cases() -> list[Case]:
    cases = []
    for index, (name, op) in enumerate(_operations()):
        cases.append(Case(name, _text(_user_frames_call(op, 40 + index % 50))))
    for index, (cls, message) in enumerate(_USER_MESSAGES):
        err = _user_frames_call(_user_raise(cls(message) if message else cls()), 60 + index)
        cases.append(Case(f"user {message[:30]}", _text(err)))
    for package, type_name, message, *site in _LIBRARY_RAISES:
        cases.append(Case(f"{package} {message[:30]}", _raised_at(package, type_name, message, *site)))
    return cases


def _raised_at(package: str, type_name: str, message: str, path: str, line: int, function: str,
               code: str = "") -> str:
    cls = _exception_class(package, type_name)
    exc = cls(message) if message else cls()
    frames = [Frame(USER_SCRIPT, 12, "<module>", "    main()"), Frame(USER_SCRIPT, 8, "main", "    run_step(config)"),
              Frame(path, line, function if function.isidentifier() else "run", code or f"        raise {type_name}(")]
    return formatted(frames, exc)


def _exception_class(package: str, name: str) -> type[BaseException]:
    builtin = __builtins__.get(name) if isinstance(__builtins__, dict) else getattr(__builtins__, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return builtin
    return foreign_exception(package, name, Exception)


def extracted_cases(packages: tuple[str, ...], per_package: int, seed: int = 17) -> list[Case]:
    """Messages the extractor finds in other installed packages, raised from their own sites."""
    from analyzer.extract.scan import extract_tree

    rng = random.Random(seed)
    cases = []
    for package in packages:
        try:
            result = extract_tree(package=package, jobs=1)
        except (ValueError, FileNotFoundError, ModuleNotFoundError):
            continue
        usable = [e for e in result.entries if e["examples"] and not e["exception"].startswith(("log.", "Argument",
                                                                                                 "SystemExit"))]
        for entry in rng.sample(usable, min(per_package, len(usable))):
            src = entry["source"]
            function = src["function"].rsplit(".", 1)[-1]
            cases.append(Case(f"{package} {entry['id']}", _raised_at(
                package, entry["exception"], entry["examples"][0], src["path"], src["line"],
                "run" if function == "<module>" else function)))
    return cases


def mirrored_cases(patterns: list, sample: int, seed: int = 17) -> list[Case]:
    """SGLang's own texts raised by another project: vLLM shares many of them (code copied between the
    two), so a vLLM traceback prints an SGLang message from `vllm/...`. None of these is SGLang's error."""
    rng = random.Random(seed)
    pool = sorted((p for p in patterns if p.examples and p.source.path and p.source.path.startswith("sglang/srt/")
                   and not p.exception.startswith(("log.", "Argument")) and p.exception != "SystemExit"),
                  key=lambda p: p.id)
    cases = []
    for pattern in rng.sample(pool, min(sample, len(pool))):
        path = "vllm/model_executor/" + pattern.source.path.removeprefix("sglang/srt/")
        function = (pattern.source.function or "run").rsplit(".", 1)[-1]
        cases.append(Case(f"vllm {pattern.id}", _raised_at(
            "vllm", pattern.short_exception, pattern.examples[0], path, pattern.source.line or 2,
            function if function.isidentifier() else "run")))
    return cases


def installed_packages() -> tuple[str, ...]:
    """Packages of this environment to extract messages from (all but this project and SGLang)."""
    return ("numpy", "pandas", "yaml", "jinja2", "click", "tornado", "rich", "textual", "dask", "packaging",
            "dateutil", "openpyxl", "pyarrow", "hypothesis", "prompt_toolkit", "distributed")

