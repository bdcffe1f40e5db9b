"""Import cost: each check runs in a fresh interpreter, so earlier imports cannot hide a heavy one."""

import ast
import subprocess
import sys
from pathlib import Path

import neurodyn

PKG = Path(neurodyn.__file__).parent


def _modules_after(statement: str, candidates: tuple[str, ...]) -> list[str]:
    code = f"import sys; {statement}; print(','.join(m for m in {candidates!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_import_neurodyn_is_light():
    loaded = _modules_after(
        "import neurodyn, neurodyn.analysis, neurodyn.io, neurodyn.kernels, neurodyn.training",
        ("matplotlib", "numba", "triton"),
    )
    assert loaded == [], f"import neurodyn pulled in: {loaded}"


def test_tasks_need_only_numpy():
    # sampling draws its trial uniforms with a Numba kernel, so Numba loads then, not at import (and
    # Numba's own import loads SciPy, when installed, to check its version)
    heavy = ("torch", "scipy", "sklearn", "matplotlib", "numba", "triton", "xarray")
    loaded = _modules_after("import neurodyn.tasks, neurodyn._seed", heavy)
    assert loaded == [], f"import neurodyn.tasks pulled in: {loaded}"
    loaded = _modules_after("import neurodyn.tasks; neurodyn.tasks.FlipFlop(n_bits=2).sample(4, seed=0)",
                            tuple(m for m in heavy if m not in ("numba", "scipy")))
    assert loaded == [], f"sampling a task pulled in: {loaded}"


def test_top_level_names_resolve_lazily():
    assert neurodyn.train is neurodyn.training.train
    assert set(neurodyn.__all__) <= set(dir(neurodyn))


def test_layers_import_downward_only():
    order = ["tasks", "models", "kernels", "training", "analysis", "plotting", "sweep", "cli"]
    for i, layer in enumerate(order):
        for f in (PKG / layer).rglob("*.py"):
            tree = ast.parse(f.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("neurodyn."):
                    target = node.module.split(".")[1]
                    if target in order:
                        assert order.index(target) <= i, f"{f.relative_to(PKG)} imports {node.module}"


def test_lazy_numpy_is_numpy_once_used():
    loaded = _modules_after("from neurodyn._lazy import numpy", ("numpy",))
    assert loaded == []
    import numpy as np

    from neurodyn._lazy import numpy as lazy_np

    assert lazy_np.zeros is np.zeros and lazy_np.random.Generator is np.random.Generator
    # once loaded it is a plain module that holds what NumPy hands out on request, so reads stay cheap
    assert type(lazy_np) is type(np) and "random" in vars(lazy_np)
