"""Folders the tests read: the repository root, its docs and examples, and the stored reference files."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
EXAMPLES = REPO / "examples"
REFERENCE = REPO / "tests" / "reference"
