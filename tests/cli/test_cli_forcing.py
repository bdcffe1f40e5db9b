"""``neurodyn train TASK --forcing ...``: forced training from the command line, its record and its errors."""

import pytest

from neurodyn.cli.main import main
from neurodyn.io import load_checkpoint

TINY = ["--delay-ms", "30", "--n-units", "6", "--n-iterations", "3", "--batch-size", "4", "--eval-every", "0",
        "--no-progress"]


def test_error_forcing_with_rflo_trains_and_is_recorded_in_the_checkpoint(tmp_path, capsys):
    out = tmp_path / "xor.pt"
    assert main(["train", "delayed_xor", *TINY, "--forcing", "error", "--forcing-strength", "0.7",
                 "--forcing-anneal", "linear", "--learning-rule", "rflo", "--out", str(out)]) == 0
    assert "trained leaky (6 units) on delayed_xor for 3 iterations" in capsys.readouterr().out
    forcing = load_checkpoint(out).training["forcing"]
    assert forcing == {"method": "error", "strength": 0.7, "anneal": "linear", "ridge": 1e-3, "rule": "rflo"}


@pytest.mark.parametrize("args, message", [
    (["--forcing-strength", "0.5"], "--forcing-strength needs --forcing error or --forcing teacher"),
    (["--forcing", "error", "--forcing-strength", "1.5"], "--forcing-strength must be a finite number in"),
    (["--learning-rule", "rflo", "--model", "gru"], "--learning-rule rflo needs a LeakyRNN"),
])
def test_bad_forcing_options_fail_with_one_line_and_write_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "m.pt"
    assert main(["train", "delayed_xor", *TINY, *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
