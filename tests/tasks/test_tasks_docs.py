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


def test_every_registered_task_has_a_section_and_writing_one_is_documented():
    from neurodyn.tasks import TASKS

    text = DOC.read_text()
    headings = re.findall(r"^## .*\(`(\w+)`\)$", text, flags=re.M)
    assert sorted(headings) == sorted(TASKS)  # flip-flop included
    own = text.split("## Writing your own task", 1)[1].split("\n## ", 1)[0]
    assert "@register_task" in own and "(Task):" in own and "def _sample(" in own and "```python" in own
