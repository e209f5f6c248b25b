"""setuptools' build backend, asking for mypyc where a wheel is built (setup.py compiles the core with it, unless
`ANALYZER_COMPILE=0`); an editable install and a source distribution go without it."""

from __future__ import annotations

import os

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403 - the backend's hooks, all but the one below as they are

MYPYC = "mypy==2.4.1"  # the version CI type-checks with (pyproject.toml's test extra)


def get_requires_for_build_wheel(config_settings=None):
    wanted = build_meta.get_requires_for_build_wheel(config_settings)
    return wanted if os.environ.get("ANALYZER_COMPILE") == "0" else [*wanted, MYPYC]
