"""Every ```python block of the README and of every page in docs/ runs as pasted: each in its own plain
Python process, in an empty folder, writing only the files it names. Every other fenced block carries a
language from :data:`LANGUAGES`, which says how it is checked or why it is not Python."""

import os
import re
import shlex
import subprocess
import sys
import tomllib

import pytest
from _notebooks import untracked_files
from _paths import DOCS, REPO

PAGES = {"README": REPO / "README.md",
         **{p.relative_to(DOCS).with_suffix("").as_posix(): p for p in sorted(DOCS.rglob("*.md"))}}
#: files (or folders) each block writes into its working directory (the rest write nothing), by the
#: block's index among the page's Python blocks
WRITES = {("README", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("fixed_points", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("formats", 0): {"fixedpoints.nc"},
          ("kernels", 0): {"rollout.nc"},
          ("kernels", 2): {"ff_ensemble"},
          ("tasks", 4): {"romo_outputs.png", "romo_psychometric.png"}}
#: blocks that train a network for about 15 s or more
SLOW = {("README", 0), ("fixed_points", 0), ("tasks", 4), ("sweeps", 0), ("error_forcing", 0),
        ("low_rank", 0), ("low_rank", 1), ("swap_errors", 0)}


#: the language of every fenced block in the README and docs/, and how it is checked
LANGUAGES = {
    "python": "run as pasted, below",
    "bash": "command lines: `neurodyn ...` lines parse with the real parser (test_documented_commands.py, "
            "which also runs the README's in order); `make X` names a Makefile target; `python SCRIPT` "
            "names a script of the repository that accepts every option given",
    "toml": "a sweep specification: loaded and validated by neurodyn.sweep.load_spec",
    "yaml": "a Dask configuration file (dask-jobqueue's, not neurodyn's): parsed as YAML",
    "py": "a peer library's code beside neurodyn's (Coming from pages); the peer is not a dependency",
    "julia": "the GTF-shPLRNN / SCYFI Julia code beside neurodyn's; Julia is not a dependency",
    "text": "a diagram, a folder layout or program output: not code",
}


def fenced_blocks(path) -> list[tuple[str, str]]:
    """(language, code) of every fenced block; an unlabelled fence has language ``""``."""
    return re.findall(r"^[ \t]*```(\w*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$", path.read_text(), flags=re.S | re.M)


def python_blocks(path):
    return [code for lang, code in fenced_blocks(path) if lang == "python"]


BLOCKS = [(page, i) for page, path in PAGES.items() for i in range(len(python_blocks(path)))]


def test_every_block_has_a_known_language_and_none_is_indented():
    unknown = [(page, lang or "(none)") for page, path in PAGES.items() for lang, _ in fenced_blocks(path)
               if lang not in LANGUAGES]
    assert not unknown, f"label these fences with one of {sorted(LANGUAGES)}: {unknown}"
    indented = [page for page, path in PAGES.items() if re.search(r"^[ \t]+```", path.read_text(), re.M)]
    assert not indented, f"indented fences are not run; move them to the margin: {indented}"


def blocks_of(language: str) -> list[tuple[str, str]]:
    return [(page, code) for page, path in PAGES.items() for lang, code in fenced_blocks(path)
            if lang == language]


def test_bash_lines_name_real_targets_scripts_and_options():
    makefile = (REPO / "Makefile").read_text()
    for page, code in blocks_of("bash"):
        for line in re.sub(r"\\\n\s*", " ", code).splitlines():
            words = shlex.split(line.split(" # ")[0].split("  #")[0], comments=True)
            words = [w for w in words if not re.fullmatch(r"[A-Z_]+=.*", w)]  # environment assignments
            if not words or words[0] == "neurodyn":
                continue
            if words[0] == "make":
                assert re.search(rf"^{words[1]}:", makefile, re.M), f"{page}: no Makefile target {words[1]}"
                continue
            assert words[0].endswith("python"), f"{page}: a bash line no test checks: {line}"
            script = (REPO / words[1]).read_text()
            if "from _gallery import" in script:  # a page runner: --tiny and --out-dir come from its parser
                script += (REPO / "examples" / "_gallery.py").read_text()
            if "from _record import bench_parser" in script:  # a benchmark: shared options from its parser
                script += (REPO / "benchmarks" / "_record.py").read_text()
            missing = [w for w in words[2:] if w.startswith("--") and f'"{w.split("=")[0]}"' not in script]
            assert not missing, f"{page}: {words[1]} has no option {missing}"


def test_toml_and_yaml_blocks_load():
    import yaml

    from neurodyn.sweep import load_spec

    for _page, code in blocks_of("toml"):
        load_spec(tomllib.loads(code))  # raises SpecError naming a bad option
    for page, code in blocks_of("yaml"):
        assert isinstance(yaml.safe_load(code), dict), page


def test_every_page_is_read_and_the_known_writers_exist():
    counts = {k: len(python_blocks(p)) for k, p in PAGES.items()}
    assert all(index < counts[page] for page, index in WRITES), "WRITES names a block that is gone"


@pytest.mark.parametrize("page, index", [pytest.param(*b, marks=[pytest.mark.slow] if b in SLOW else [])
                                         for b in BLOCKS], ids=[f"{p}-{i}" for p, i in BLOCKS])
def test_block_runs_as_pasted(page, index, tmp_path):
    code = python_blocks(PAGES[page])[index]
    (tmp_path / "block.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # a plain process picks its backend
    env["OMP_NUM_THREADS"] = "1"
    before = untracked_files()
    proc = subprocess.run([sys.executable, "block.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"{page} block {index} failed:\n{code}\n{proc.stderr[-3000:]}"
    written = {p.name for p in tmp_path.iterdir()} - {"block.py"}
    assert written == WRITES.get((page, index), set())
    sizes = {name: sum(f.stat().st_size for f in (tmp_path / name).rglob("*")) if (tmp_path / name).is_dir()
             else (tmp_path / name).stat().st_size for name in written}
    assert all(size > 1000 for size in sizes.values()), sizes
    assert untracked_files() == before
