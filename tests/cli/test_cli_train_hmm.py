"""``neurodyn train hmm`` trains on the sequence divergence (not a per-step loss)."""

from neurodyn.cli.main import main
from neurodyn.io import load_checkpoint


def test_train_hmm_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "hmm.pt"
    rc = main(["train", "hmm", "--n-steps", "8", "--n-units", "8", "--alpha", "0.1", "--n-iterations", "3",
               "--batch-size", "16", "--no-progress", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "emission_error" in printed
    ck = load_checkpoint(out)
    assert ck.task.name == "hmm" and ck.model.n_outputs == ck.task.n_outputs
    assert 0.0 <= ck.extra["final_metrics"]["emission_error"] <= 1.0


def test_per_step_options_are_refused_for_hmm(tmp_path, capsys):
    rc = main(["train", "hmm", "--n-iterations", "1", "--early-stopping", "loss:3",
               "--out", str(tmp_path / "m.pt")])
    assert rc == 2
    assert "per-step losses only" in capsys.readouterr().err
    assert not (tmp_path / "m.pt").exists()


def test_train_refuses_nonsense_settings(tmp_path, capsys):
    for extra in (["--n-iterations", "0"], ["--target-accuracy", "2"]):
        rc = main(["train", "flipflop", *extra, "--out", str(tmp_path / "m.pt")])
        assert rc == 2
        assert "must be" in capsys.readouterr().err
        assert not (tmp_path / "m.pt").exists()


def test_tasks_listing_has_no_markup(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "flipflop" in out and "``" not in out
