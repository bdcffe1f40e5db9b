"""The Python examples in docs/models.md and docs/training.md run and their assertions hold."""

import re

import pytest
from _paths import DOCS

BLOCKS = [(name, block) for name in ("models.md", "training.md")
          for block in re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), flags=re.S)]


def test_docs_have_examples():
    assert sum(name == "models.md" for name, _ in BLOCKS) >= 2
    assert sum(name == "training.md" for name, _ in BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index):
    name, block = BLOCKS[index]
    exec(compile(block, f"{name}[{index}]", "exec"), {})
