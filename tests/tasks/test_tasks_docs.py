"""The protocol example at the top of docs/tasks.md runs as written."""

from __future__ import annotations

import re

from _paths import DOCS

DOC = DOCS / "tasks.md"


def test_tasks_protocol_example_runs():
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    metrics = namespace["task"].evaluate(namespace["outputs"], namespace["batch"])
    assert set(metrics) == {"accuracy", "fixation_accuracy"}
    assert 0.0 <= metrics["accuracy"] <= 1.0
