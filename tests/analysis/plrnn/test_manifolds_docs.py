"""The Python examples in the manifold, basin, chaos and portrait sections of docs/plrnn.md run."""

import re

import pytest
from _paths import DOCS

DOC = DOCS / "plrnn.md"
TEXT = DOC.read_text()
MINE = TEXT[TEXT.index("## Stable and unstable manifolds"):]
BLOCKS = re.findall(r"```python\n(.*?)```", MINE, flags=re.S)


def test_sections_have_examples():
    assert len(BLOCKS) >= 3
    for heading in ("## Basins of attraction", "## Homoclinic points and chaos", "## Lyapunov spectrum",
                    "## Phase portraits"):
        assert heading in MINE


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index):
    import matplotlib

    matplotlib.use("Agg")
    exec(compile(BLOCKS[index], f"plrnn.md[manifolds {index}]", "exec"), {})
    import matplotlib.pyplot as plt

    plt.close("all")
