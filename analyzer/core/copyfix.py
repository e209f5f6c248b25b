"""A fix applied to the user's own launch command: the "copy fix".

A fix says what changes as a before/after pair of command-line fragments (`--mem-fraction-static
0.8` -> `--mem-fraction-static 0.75`, `--enable-two-batch-overlap` -> nothing, `X=1` in front). The
change is: the flags and environment assignments of `after` are set, those only in `before` are
removed. Applied to the logged command, it keeps everything else as the user typed it (aliases such
as `--tp`, `--flag=value` spellings, `$VARS`). Pure.
"""

from __future__ import annotations

import re
import shlex

from analyzer.core.runconfig import LaunchCommand, Server, attribute_of_flag, join_words, parse_launch_command

__all__ = ["apply_change"]

_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def apply_change(command: LaunchCommand, before: str, after: str) -> str | None:
    """The command with the change from `before` to `after`; None when it would not change."""
    old_env, old_flags = _fragment(before, command.server)
    new_env, new_flags = _fragment(after, command.server)
    if old_env is None or new_env is None or (not new_flags and not old_flags and not new_env and not old_env):
        return None
    removed = {name for name in old_flags if name not in new_flags}
    unset = {name for name in old_env if name not in new_env}
    words = list(command.words)
    program_at = next((i for i, word in enumerate(words) if not _ENV.match(word)), 0)
    env = [w for w in words[:program_at] if w.split("=", 1)[0] not in unset and w.split("=", 1)[0] not in new_env]
    env = [f"{name}={value}" for name, value in new_env.items()] + env
    program = words[program_at:command.flags_at]
    flags: list[str] = []
    seen: set[str] = set()
    rest = words[command.flags_at:]
    index = 0
    while index < len(rest):
        word = rest[index]
        index += 1
        if not _is_flag(word):
            flags.append(word)
            continue
        name, has_inline, _ = word.partition("=")
        value_word = None
        if not has_inline and index < len(rest) and not _is_flag(rest[index]):
            value_word, index = rest[index], index + 1
        attribute = attribute_of_flag(name, command.server)
        if attribute in removed:
            continue
        if attribute in new_flags and attribute not in seen:
            seen.add(attribute)
            spelled, value = new_flags[attribute]
            flags.extend(_flag_words(name, value, inline=bool(has_inline)))
            continue
        flags.append(word)
        if value_word is not None:
            flags.append(value_word)
    for attribute, (spelled, value) in new_flags.items():
        if attribute not in seen:
            flags.extend(_flag_words(spelled, value, inline=False))
    changed = env + program + flags
    return join_words(changed) if changed != words else None


def _flag_words(flag: str, value: str | None, inline: bool) -> list[str]:
    if value is None:
        return [flag]
    return [f"{flag}={value}"] if inline else [flag, value]


def _fragment(text: str, server: Server) -> tuple[dict[str, str] | None, dict[str, tuple[str, str | None]]]:
    """A before/after fragment as its environment assignments and flags (attribute -> (flag, value));
    None for the environment when the fragment is not a command line at all."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None, {}
    env: dict[str, str] = {}
    while words and _ENV.match(words[0]):
        name, _, setting = words.pop(0).partition("=")
        env[name] = setting
    command = parse_launch_command(" ".join(words)) if words else None
    if command is not None:
        words = list(command.words[command.flags_at:])
    flags: dict[str, tuple[str, str | None]] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("...", "…"):
            continue
        if not _is_flag(word):
            return None, {}  # prose, or a program this fix does not know: not a change to apply
        name, has_inline, written = word.partition("=")
        value = written if has_inline else None
        if not has_inline and index < len(words) and not _is_flag(words[index]) and words[index] not in ("...", "…"):
            value, index = words[index], index + 1
        flags[attribute_of_flag(name, server)] = (name, value)
    return env, flags


def _is_flag(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-\d[\d.e-]*", word)
