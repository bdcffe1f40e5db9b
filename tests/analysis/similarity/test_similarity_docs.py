"""The Python examples in docs/similarity.md run and their assertions hold."""

import re

import pytest
from _paths import DOCS

DOC = DOCS / "similarity.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index):
    exec(compile(BLOCKS[index], f"{DOC.name}[{index}]", "exec"), {})
