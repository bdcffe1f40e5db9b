import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The real recordings in ../shared/data (skips when a user's clone does not have them)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real recordings not available at {SHARED_DATA}")
    return SHARED_DATA
