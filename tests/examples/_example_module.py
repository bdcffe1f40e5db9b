"""Import an example script (examples/ is a folder of scripts, not a package) as a module."""

import importlib.util
import sys
from types import ModuleType

from _paths import EXAMPLES


def load_example(name: str) -> ModuleType:
    """The module ``examples/<name>.py``, with ``examples/`` importable for its shared runner."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
