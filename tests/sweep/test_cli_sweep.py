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
