import os
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one BLAS/OpenMP/Numba thread per test worker: the workers already fill the cores
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")

import matplotlib  # noqa: E402
import pytest  # noqa: E402

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")
if os.environ.get("PYTEST_XDIST_WORKER"):
    import torch

    torch.set_num_threads(1)

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The real recordings in ../shared/data (skips when a user's clone does not have them)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real recordings not available at {SHARED_DATA}")
    return SHARED_DATA


#: test files whose one shared setup takes minutes (the documentation site's build): collected first, so
#: that under pytest-xdist one worker starts it at once while the others run the rest of the suite
FIRST = ("tests/examples/test_site.py",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the tests of :data:`FIRST` to the front of the run, keeping every other test's order."""
    root = Path(__file__).resolve().parents[1]
    first = {root / name for name in FIRST}
    items.sort(key=lambda item: item.path not in first)
