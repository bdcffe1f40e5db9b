"""The task examples in examples/tasks/ run at tiny size and report sane metrics.

Each script runs the gallery page docs/gallery/task_training.py for its task through the shared runner
``_run`` in its own folder, which is first on ``sys.path`` when one runs as
``python examples/tasks/NAME.py``; the tests put it there too."""

import importlib.util
import math

import pytest
from _paths import EXAMPLES

EXAMPLES = EXAMPLES / "tasks"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


@pytest.fixture(autouse=True)
def _runner_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_example_per_task():
    expected = {"sine_wave.py", "romo.py", "dms.py", "continuous_report.py",
                "path_integration.py", "hmm_emulation.py"}
    assert expected <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs_tiny(name, capsys):
    out = _load(name).main(tiny=True)
    printed = capsys.readouterr().out
    assert printed.strip(), f"{name} printed nothing"
    for key in ("metrics", "ood"):
        for metric, value in out[key].items():
            assert math.isfinite(value), f"{name}: {key}.{metric} = {value}"


@pytest.mark.parametrize("name, switch, metric", [("continuous_report.py", "two_items", "swap_rate")])
def test_example_switch_reaches_the_page(name, switch, metric, capsys):
    out = _load(name).main(tiny=True, **{switch: True})
    assert metric in out["metrics"] and metric in capsys.readouterr().out
