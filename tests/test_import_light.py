import ast
import subprocess
import sys
from pathlib import Path

import neurodyn

PKG = Path(neurodyn.__file__).parent


def test_import_neurodyn_is_light():
    code = (
        "import sys, neurodyn, neurodyn.analysis, neurodyn.io, neurodyn.kernels, neurodyn.training; "
        "heavy = [m for m in ('matplotlib', 'numba', 'triton') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import neurodyn pulled in: {out.stdout.strip()}"


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_tasks_need_only_numpy_at_import():
    files = sorted((PKG / "tasks").glob("*.py"))
    assert files
    for f in files:
        heavy = _top_level_imports(f) & {"torch", "matplotlib", "numba", "triton", "scipy", "sklearn"}
        assert not heavy, f"{f.name} imports {heavy} at module level"


def test_layers_import_downward_only():
    order = ["tasks", "models", "kernels", "training", "analysis", "plotting", "cli"]
    for i, layer in enumerate(order):
        for f in (PKG / layer).rglob("*.py"):
            tree = ast.parse(f.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("neurodyn."):
                    target = node.module.split(".")[1]
                    if target in order:
                        assert order.index(target) <= i, f"{f.relative_to(PKG)} imports {node.module}"
