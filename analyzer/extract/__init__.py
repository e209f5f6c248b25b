"""Signature extraction: read Python source with ``ast`` (never importing
it) and turn raised / asserted / logged error messages into pattern-pack
entries.

* :mod:`analyzer.extract.message` -- message expression -> template + example
* :mod:`analyzer.extract.walker`  -- the ast walker (one file -> signatures)
* :mod:`analyzer.extract.emit`    -- ids, entries, pack YAML read/write
* :mod:`analyzer.extract.scan`    -- locating sources, process-pool scanning
* :mod:`analyzer.extract.update`  -- merging a re-extraction into a pack
"""

from analyzer.extract.emit import build_entries, dump_pack, load_pack, write_pack
from analyzer.extract.scan import ExtractResult, extract_tree, find_package
from analyzer.extract.update import UpdateReport, merge_entries
from analyzer.extract.walker import ParseFailure, extract_file, extract_source

__all__ = [
    "ExtractResult",
    "ParseFailure",
    "UpdateReport",
    "build_entries",
    "dump_pack",
    "extract_file",
    "extract_source",
    "extract_tree",
    "find_package",
    "load_pack",
    "merge_entries",
    "write_pack",
]
