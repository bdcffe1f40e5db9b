"""The Python examples in the models and cycles sections of docs/plrnn.md run."""

import re

import pytest
from _paths import DOCS

TEXT = (DOCS / "plrnn.md").read_text()
MINE = TEXT[TEXT.index("## Models"):TEXT.index("## Stable and unstable manifolds")]
BLOCKS = re.findall(r"```python\n(.*?)```", MINE, flags=re.S)


def test_sections_have_examples() -> None:
    assert "## Fixed points and k-cycles (exact)" in MINE
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"plrnn.md[cycles {index}]", "exec"), {})
