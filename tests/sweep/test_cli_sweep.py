"""``neurodyn sweep``: runs and resumes a sweep, --dry-run estimates, bad input gets one line, status 2."""

import shutil

import pytest

from neurodyn.cli.main import main
from tests.sweep.conftest import TINY_TOML


@pytest.fixture
def spec_file(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(TINY_TOML)
    return path


@pytest.mark.slow
def test_cli_resumes_the_sweep(serial_sweep, spec_file, tmp_path, capsys):
    out = shutil.copytree(serial_sweep[1], tmp_path / "out")
    assert main(["sweep", str(spec_file), "--out", str(out), "--workers", "0", "--no-progress"]) == 0
    assert "4 networks: 0 computed, 4 skipped" in capsys.readouterr().out


@pytest.mark.slow
def test_dry_run_counts_and_estimates(spec_file, tmp_path, capsys):
    assert main(["sweep", str(spec_file), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "4 networks in 2 grid cells × 2 seeds; 0 finished" in text and "core-hours" in text
    assert not (tmp_path / "o").exists()  # a dry run writes nothing


def test_bad_spec_and_flags(spec_file, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY_TOML.replace('"model.gain" = [0.5, 1.0]', '"model.gian" = [0.5]'))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("neurodyn sweep: error: spec: unknown option model.gian") and "\n" not in err
    assert main(["sweep", str(spec_file), "--out", str(tmp_path / "o"), "--workers", "-1"]) == 2
    assert "--workers must be >= 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sweep", str(spec_file), "--out", "o", "--scheduler", "tcp://x:1", "--cluster", "slurm"])


@pytest.fixture
def no_calibration(monkeypatch):
    """--dry-run with a stand-in estimate (1 s per network), so only its counting and checks run."""
    from neurodyn.sweep import _estimate

    monkeypatch.setattr(_estimate, "estimate_sweep", lambda spec, workers: {
        "n_cells": len(spec.cells), "seconds_per_item": 1.0, "calibrated_cells": 1,
        "train_seconds_per_item": 0.5, "analysis_seconds_per_item": 0.5})


def test_dry_run_makes_the_real_runs_checks(spec_file, tmp_path, capsys, no_calibration, monkeypatch):
    out = str(tmp_path / "o")
    assert main(["sweep", str(spec_file), "--out", out, "--dry-run", "--workers", "0"]) == 0
    assert "on 1 worker(s)" in capsys.readouterr().out  # serial: one worker
    assert main(["sweep", str(spec_file), "--out", out, "--dry-run", "--workers", "0",
                 "--scheduler", "tcp://x:1"]) == 2
    assert "runs the sweep serially in this process; drop it" in capsys.readouterr().err
    monkeypatch.setattr(shutil, "which", lambda cmd: None)
    assert main(["sweep", str(spec_file), "--out", out, "--dry-run", "--cluster", "slurm"]) == 2
    assert capsys.readouterr().err.strip() == (
        "neurodyn sweep: error: --cluster slurm needs SLURM's sbatch on PATH (not found); run on a SLURM "
        "login node, or use --workers N for a local cluster")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "spec.json").write_text('{"seeds": [7]}')
    assert main(["sweep", str(spec_file), "--out", out, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds a sweep made with a different spec" in err and "pass --force to reuse it, or" in err
    assert "(--force)" not in err
    assert main(["sweep", str(spec_file), "--out", out, "--workers", "0", "--no-progress"]) == 2  # the run
    assert capsys.readouterr().err == err + "\n"
    assert main(["sweep", str(spec_file), "--out", out, "--dry-run", "--force"]) == 0
    assert "0 finished" in capsys.readouterr().out
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["spec.json"]  # a dry run writes nothing
