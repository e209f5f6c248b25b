"""The sources at the edge: bytes to bounded lines, directory walks, compressed files.

Every problem is one line naming the file; no input stops the others."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import os
import socket
import threading

import pytest
import zstandard

from analyzer.sources.files import expand_paths, read_chunks, read_lines
from analyzer.sources.lines import LineSplitter, split_lines, utf8_chunks
from tests.realtb import capture, text_of
from tests.support import bare_engine

SAMPLE = "Traceback (most recent call last):\r\n  File \"/srv/app.py\", line 3, in main\nValueError: température ✓ 🔥\n"
SAMPLE_LINES = ["Traceback (most recent call last):\r", '  File "/srv/app.py", line 3, in main',
                "ValueError: température ✓ 🔥"]
ENCODED = {
    "utf-8": SAMPLE.encode(),
    "utf-8 with mark": codecs.BOM_UTF8 + SAMPLE.encode(),
    "utf-16-le with mark": codecs.BOM_UTF16_LE + SAMPLE.encode("utf-16-le"),
    "utf-16-be with mark": codecs.BOM_UTF16_BE + SAMPLE.encode("utf-16-be"),
}


def _split_at(data: bytes, *cuts: int) -> list[bytes]:
    edges = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


@pytest.mark.parametrize("encoding", sorted(ENCODED))
def test_every_single_cut_decodes_the_same(encoding):
    """The byte-order mark is recognised wherever the first chunk ends, even when it is empty."""
    data = ENCODED[encoding]
    for cut in range(len(data) + 1):
        assert list(split_lines(_split_at(data, cut))) == SAMPLE_LINES, cut
        assert list(split_lines(_split_at(data, 0, cut))) == SAMPLE_LINES, cut


@pytest.mark.parametrize("encoding", sorted(ENCODED))
def test_one_byte_chunks_and_the_fast_path_decoder_agree(encoding):
    data = ENCODED[encoding]
    one_by_one = [data[i:i + 1] for i in range(len(data))]
    assert list(split_lines(one_by_one)) == SAMPLE_LINES
    assert b"".join(utf8_chunks(one_by_one)) == SAMPLE.encode()


@pytest.mark.parametrize("data, lines", [
    (b"", []),
    (codecs.BOM_UTF8, []),
    (codecs.BOM_UTF16_LE, []),
    (b"\xef\xbb", ["\ufffd"]),  # half a mark and nothing else: shown, not lost
    (codecs.BOM_UTF16_LE + "ok".encode("utf-16-le") + b"\x41", ["ok\ufffd"]),  # odd byte at the end
    (b"a\xffb\xc3\n\xe2\x82", ["a\ufffdb\ufffd", "\ufffd"]),
])
def test_short_and_broken_inputs(data, lines):
    assert list(split_lines([data])) == lines


def test_nul_hole_does_not_eat_the_text_after_it():
    """`copytruncate` without O_APPEND leaves a hole of NULs, with no newline, before new text."""
    hole = b"\x00" * (1 << 16)
    lines = list(split_lines([b"before\n", hole, hole, b"after the hole\n"], max_line=1024))
    assert lines == ["before", "after the hole"]


def test_nuls_inside_lines_are_dropped():
    assert list(split_lines([b"Val\x00ueError: x\x00\n"])) == ["ValueError: x"]


def test_overlong_line_is_cut_with_a_count_of_what_was_dropped():
    splitter = LineSplitter(max_line=100)
    out = []
    for _ in range(50):
        out += splitter.feed(b"x" * 37)
    out += splitter.feed(b"\nnext\n")
    assert out == ["x" * 100 + f" [analyzer: line cut, {50 * 37 - 100} more bytes dropped]", "next"]
    assert splitter.finish() is None


def test_last_line_without_newline_is_kept():
    assert list(split_lines([b"a\nno newline"])) == ["a", "no newline"]


# ----------------------------------------------------------------------------- files and directories


def _problems():
    """The problems' texts, as a person reads them on stderr."""
    found: list[str] = []
    return found, lambda problem: found.append(str(problem))


def test_directory_walk_skips_loops_links_and_fifos_naming_each(tmp_path):
    root = tmp_path / "logs"
    (root / "a").mkdir(parents=True)
    (root / "a" / "one.log").write_text("x\n")
    (root / "two.log").write_text("y\n")
    (root / "a" / "up").symlink_to(root)  # a loop back to the top
    (root / "self").symlink_to(root / "self")  # a link to itself
    (root / "dangling").symlink_to(root / "gone")
    os.mkfifo(root / "pipe")  # reading it would block for ever
    problems, on_problem = _problems()
    files = list(expand_paths([str(root)], on_problem))
    assert files == [str(root / "two.log"), str(root / "a" / "one.log")]
    assert all("\n" not in p for p in problems)
    by_path = {p.split(": ", 1)[0]: p for p in problems}
    assert "symlink loop" in by_path[str(root / "a" / "up")]
    assert set(by_path) >= {str(root / "self"), str(root / "dangling"), str(root / "pipe")}


def test_missing_and_special_paths_given_on_the_command_line(tmp_path):
    """A FIFO named on the command line (`<(kubectl logs pod)`) is read as a stream; a socket is not
    something to read."""
    os.mkfifo(tmp_path / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    problems, on_problem = _problems()
    given = [str(tmp_path / "missing.log"), str(tmp_path / "pipe"), str(tmp_path / "sock")]
    assert list(expand_paths(given, on_problem)) == [str(tmp_path / "pipe")]
    assert problems == [f"{tmp_path / 'missing.log'}: no such file or directory",
                        f"{tmp_path / 'sock'}: not a regular file or directory, skipped"]
    server.close()


def _fails():
    raise ValueError("from a pipe")


def test_a_fifo_is_scanned_as_a_stream(tmp_path):
    """`analyzer scan <(command)`: the traceback written into the pipe, in pieces, is found."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    text = text_of(capture(_fails)).encode()

    def writer() -> None:
        with open(fifo, "wb") as pipe:
            for start in range(0, len(text), 7):
                pipe.write(text[start:start + 7])
                pipe.flush()

    thread = threading.Thread(target=writer)
    thread.start()
    result = bare_engine().analyse([str(fifo)])
    thread.join(10)
    (incident,) = result.incidents
    assert incident.info.exception_type == "ValueError" and incident.info.message == "from a pipe"
    assert result.problems == ()


def test_file_gone_before_it_is_read(tmp_path):
    problems, on_problem = _problems()
    assert list(read_lines(str(tmp_path / "rotated-away.log"), on_problem)) == []
    assert problems == [f"{tmp_path / 'rotated-away.log'}: No such file or directory"]


def _two_tracebacks() -> bytes:
    first = text_of(capture(lambda: int("first")))
    second = text_of(capture(lambda: {}["second"]))
    return (first + "INFO 12-01 10:00:00 [a.py:1] between\n" * 20000 + second).encode()


def _zstd(data: bytes) -> bytes:
    """Two frames, as `zstd -c a b` writes them, each in blocks small enough to be cut between."""
    half = len(data) // 2
    packer = zstandard.ZstdCompressor(level=1)
    return b"".join(packer.compress(part) for part in (data[:half], data[half:]))


@pytest.mark.parametrize("compress", [gzip.compress, lambda data: bz2.compress(data, 1), lzma.compress, _zstd],
                         ids=["gz", "bz2", "xz", "zst"])
def test_compressed_file_whole(tmp_path, compress):
    """Detected by content, whatever the name: every line comes back."""
    path = tmp_path / "server.log.1"
    path.write_bytes(compress(_two_tracebacks()))
    problems, on_problem = _problems()
    lines = list(read_lines(str(path), on_problem))
    assert lines == _two_tracebacks().decode().splitlines() and problems == []


@pytest.mark.parametrize("compress", [gzip.compress, lambda data: bz2.compress(data, 1), lzma.compress, _zstd],
                         ids=["gz", "bz2", "xz", "zst"])
def test_compressed_file_cut_in_the_middle(tmp_path, compress):
    """What was decompressed before the cut is read (bzip2: whole 100 kB blocks only); the cut is
    one line naming the file."""
    packed = compress(_two_tracebacks())
    path = tmp_path / "server.log.1"
    path.write_bytes(packed[:len(packed) // 2])
    problems, on_problem = _problems()
    lines = list(read_lines(str(path), on_problem))
    assert lines[0] == "Traceback (most recent call last):"
    assert any(line.startswith("ValueError: invalid literal for int()") for line in lines)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: read stopped early: ")
    assert "\n" not in problems[0]


def test_corrupt_gzip_is_a_problem_not_a_crash(tmp_path):
    packed = bytearray(gzip.compress(_two_tracebacks()))
    for at in range(40, len(packed) - 40, 97):  # damage the deflate stream, keep the header
        packed[at] ^= 0x5A
    path = tmp_path / "server.log.gz"
    path.write_bytes(bytes(packed))
    problems, on_problem = _problems()
    list(read_chunks(str(path), on_problem))
    assert len(problems) == 1 and problems[0].startswith(f"{path}: read stopped early: ")


def test_gzip_magic_alone(tmp_path):
    path = tmp_path / "empty.gz"
    path.write_bytes(b"\x1f\x8b")
    problems, on_problem = _problems()
    assert list(read_lines(str(path), on_problem)) == []
    assert problems and problems[0].startswith(f"{path}: read stopped early: ")
