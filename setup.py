"""Package data that lives outside `analyzer/` in a checkout goes inside it in a built wheel.

The pattern packs (`patterns/`) and the bundled sample log (`fixtures/logs/`) are edited where
they are; a non-editable build copies them to `analyzer/_patterns/` and `analyzer/_data/sample.log`,
where `analyzer.sources.packs` and `analyzer.commands.common` look when no checkout is around.
An editable install reads them from the checkout, so nothing is copied then.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

_ROOT = Path(__file__).resolve().parent
_SAMPLE = _ROOT / "fixtures" / "logs" / "sglang_deepseek_v4_cp_a2a.log"


class BuildWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "analyzer"
        shutil.copytree(_ROOT / "patterns", target / "_patterns", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.md"))
        (target / "_data").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_SAMPLE, target / "_data" / "sample.log")


setup(cmdclass={"build_py": BuildWithData})
