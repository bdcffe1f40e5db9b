"""The documentation site: `mkdocs build --strict` succeeds (gallery executed, API pages generated from the
docstrings), no internal link or image is broken, every public name has an API entry, and the pages render
in headless Chromium without console errors (when Chromium is installed, as `.ci/run` does)."""

import functools
import http.server
import importlib
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from _paths import REPO
from filelock import FileLock

pytestmark = pytest.mark.slow
API_PACKAGES = ["tasks", "models", "kernels", "training", "analysis", "plotting", "io", "sweep"]


def build_site(out: Path) -> None:
    """``mkdocs build --strict`` of the repository into ``out``, which is asserted to succeed."""
    # no MPLBACKEND: a gallery kernel forced onto Agg shows no figures (its inline backend embeds them)
    env = {**{k: v for k, v in os.environ.items() if k != "MPLBACKEND"}, "OMP_NUM_THREADS": "1",
           "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site, built once per run: test workers (pytest-xdist) share one build through a lock."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        out = tmp_path_factory.mktemp("site") / "site"
        build_site(out)
        return out
    run_dir = tmp_path_factory.getbasetemp().parent  # this run's folder, the same for every worker
    out, built = run_dir / "site", run_dir / "site.built"
    with FileLock(run_dir / "site.lock"):
        if not built.exists():
            shutil.rmtree(out, ignore_errors=True)
            build_site(out)
            built.touch()
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_internal_links_and_images_resolve(site):
    """Every internal link, image and #anchor of every page exists. Strict mode checks those of the
    Markdown pages; this walk of the built HTML also covers the gallery pages, which it does not see."""
    broken = []
    ids = {}
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        for ref in re.findall(r'(?:href|src)="([^"]+)"', html):
            parsed = urlparse(ref)
            if parsed.scheme or ref.startswith(("data:", "mailto:")):
                continue
            path = unquote(parsed.path)
            target = (site / path.lstrip("/") if path.startswith("/") else page.parent / path).resolve()
            if not path:
                target = page
            elif target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {ref}")
            elif parsed.fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(re.findall(r'\sid="([^"]+)"', target.read_text(encoding="utf-8")))
                if unquote(parsed.fragment) not in ids[target]:
                    broken.append(f"{page.relative_to(site)} -> {ref} (no such anchor)")
    assert not broken, "\n".join(broken[:20])


def test_gallery_pages_embed_their_executed_figures(site):
    gallery = sorted((site / "gallery").glob("*/index.html"))
    assert len(gallery) == len(list((REPO / "docs" / "gallery").glob("*.py"))) >= 3
    for page in gallery:
        html = page.read_text(encoding="utf-8")
        assert re.search(r'<img[^>]*src="data:image/png;base64', html), f"{page.parent.name} shows no figure"
        assert "Traceback" not in html, f"{page.parent.name} shows an error"


def test_every_public_name_has_an_api_entry(site):
    missing = []
    for name in API_PACKAGES:
        module = importlib.import_module(f"neurodyn.{name}")
        html = (site / "api" / name / "index.html").read_text(encoding="utf-8")
        ids = set(re.findall(r'id="(neurodyn\.[\w.]+)"', html))
        for public in module.__all__:
            obj = getattr(module, public)
            if not (callable(obj) or isinstance(obj, type)):
                continue
            if not any(i.endswith(f".{public}") for i in ids):
                missing.append(f"neurodyn.{name}.{public}")
    assert not missing, missing


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is missing (.ci/run installs it)")
@pytest.mark.parametrize("path", ["index.html", "gallery/flipflop_fixed_points/index.html",
                                  "api/analysis/index.html"])
def test_pages_render_in_a_headless_browser(site, path, tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{path}"
        shot = tmp_path / "page.png"
        proc = subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
             "--window-size=1280,2000", "--virtual-time-budget=5000", f"--screenshot={shot}", url],
            capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert shot.exists() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines()
               if "CONSOLE" in line and ("rror" in line or "Uncaught" in line)]
    assert not console, console
