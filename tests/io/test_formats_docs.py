"""The example of docs/formats.md runs, and its tables name every registered result format (.nc and .pt)."""

import re

from _paths import DOCS

from neurodyn._result import FORMATS
from neurodyn.io._torch_result import TORCH_FORMATS

TEXT = (DOCS / "formats.md").read_text()


def test_formats_doc_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
    exec(compile(block, "formats.md", "exec"), {})
    assert (tmp_path / "fixedpoints.nc").exists()


def test_formats_doc_lists_every_format_with_its_status_values():
    rows = {m.group(1) for m in re.finditer(r"^\| `(neurodyn\.\w+)` \|", TEXT, flags=re.M)}
    assert rows == set(FORMATS) | set(TORCH_FORMATS)
