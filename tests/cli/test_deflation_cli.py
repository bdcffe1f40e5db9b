"""``neurodyn train ... --deflate-against a.pt --lambda L`` writes a deflated checkpoint."""

import numpy as np

from neurodyn.cli.main import main
from neurodyn.io import load_checkpoint

TINY = ["--n-bits", "2", "--n-steps", "6", "--n-units", "8", "--n-iterations", "3",
        "--batch-size", "4", "--eval-every", "2", "--no-progress"]


def test_deflate_against_checkpoints(tmp_path, capsys):
    a, b, out = tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "c.pt"
    assert main(["train", "flipflop", *TINY, "--out", str(a)]) == 0
    assert main(["train", "flipflop", *TINY, "--seed", "1", "--out", str(b)]) == 0
    assert main(["train", "flipflop", *TINY, "--seed", "2", "--deflate-against", str(a), str(b),
                 "--lambda", "0.5", "--activity-penalty", "0.1", "--out", str(out)]) == 0
    ckpt = load_checkpoint(out)
    assert ckpt.training["deflation"] == {"lam": 0.5, "ridge": 0.1, "activity_penalty": 0.1,
                                          "n_references": 2, "references": [str(a), str(b)]}
    assert ckpt.training["iterations_run"] == 3 and ckpt.seed == 2


def test_deflation_refuses_unsupported_options(tmp_path, capsys):
    a = tmp_path / "a.pt"
    assert main(["train", "flipflop", *TINY, "--out", str(a)]) == 0
    code = main(["train", "flipflop", *TINY, "--deflate-against", str(a), "--l2-rate", "0.1",
                 "--out", str(tmp_path / "c.pt")])
    assert code == 2
    assert "--l2-rate cannot be combined with --deflate-against" in capsys.readouterr().err
    code = main(["train", "dms", "--n-iterations", "1", "--no-progress", "--deflate-against", str(a),
                 "--out", str(tmp_path / "d.pt")])
    assert code == 2
    assert "trained on 'flipflop'" in capsys.readouterr().err


def test_deflation_names_a_reference_sized_for_another_task_and_its_flags(tmp_path, capsys):
    a, fit = tmp_path / "a.pt", tmp_path / "fit.pt"
    assert main(["train", "flipflop", *TINY, "--out", str(a)]) == 0
    np.save(tmp_path / "rec.npy", np.sin(np.arange(120)[:, None] * [0.1, 0.2, 0.3]))
    assert main(["fit", str(tmp_path / "rec.npy"), "--model", "plrnn", "--epochs", "1", "--batches-per-epoch",
                 "1", "--batch-size", "2", "--seq-len", "10", "--no-progress", "--out", str(fit)]) == 0
    capsys.readouterr()
    out = str(tmp_path / "c.pt")
    assert main(["train", "flipflop", *TINY, "--deflate-against", str(fit), "--out", out]) == 2
    err = capsys.readouterr().err
    assert f"--deflate-against {fit} holds a PLRNN with 0 inputs / 3 outputs, not a network for" in err
    assert main(["train", "flipflop", *TINY, "--deflate-against", str(a), "--lambda", "nan",
                 "--out", str(tmp_path / "c.pt")]) == 2
    assert "--lambda must be a finite number >= 0, got nan" in capsys.readouterr().err
    assert not (tmp_path / "c.pt").exists()
