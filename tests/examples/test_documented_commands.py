"""The command lines shown in the README and docs: every one parses with the real parser, and the README's
run top to bottom in an empty folder as a new user types them, made tiny by size options appended to
each line (the later option wins), with the files they name (a lab's GRU state_dict, a PLRNN's arrays,
a recording, a sweep specification) put there first."""

from __future__ import annotations

import shlex

import numpy as np
import pytest
from _paths import DOCS, REPO

from neurodyn.cli.main import build_parser, main

PAGES = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def documented_commands(text: str) -> list[str]:
    """``neurodyn ...`` lines of bash blocks and indented code, continuation lines joined, comments cut."""
    joined: list[str] = []
    for line in text.splitlines():
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
        else:
            joined.append(line)
    found, fence = [], None
    for line in joined:
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else (stripped[3:] or "text")
            continue
        code = fence in ("bash", "sh", "console") or (fence is None and line.startswith("    "))
        if code and stripped.startswith("neurodyn "):
            found.append(stripped.split(" # ")[0].split("  #")[0].strip())
    return found


COMMANDS = [(page.relative_to(REPO).as_posix(), c)
            for page in PAGES for c in documented_commands(page.read_text())]


def test_the_readme_shows_every_command():
    shown = {shlex.split(c)[1] for page, c in COMMANDS if page == "README.md"}
    assert shown == {"tasks", "train", "fixedpoints", "manifolds", "fit", "evaluate", "sweep"}


@pytest.mark.parametrize("page, command", COMMANDS, ids=[f"{p}:{c[9:40]}" for p, c in COMMANDS])
def test_documented_command_parses(page, command):
    argv = shlex.split(command.replace("$USER", "me"))[1:]
    args = build_parser(argv[0]).parse_args(argv)  # a mistyped flag or value exits here
    assert args.command == argv[0]


#: start of a command line → options appended to make it tiny (sizes only: what it does is unchanged)
_TRAIN = ["--n-units", "4", "--n-iterations", "2", "--batch-size", "4", "--eval-every", "0", "--no-progress"]
TINY = {
    "train flipflop": [*_TRAIN, "--n-steps", "10"],
    "train romo": [*_TRAIN, "--dt", "100"],
    "fixedpoints model.pt": ["--n-inits", "8", "--max-iters", "20", "--quiet"],
    "fixedpoints lab_model.pt": ["--n-inits", "8", "--max-iters", "20", "--quiet"],
    "fixedpoints": ["--n-inits", "8", "--n-transient", "50", "--quiet"],
    "manifolds": ["--max-depth", "2", "--max-pieces", "20"],
    "fit": ["--epochs", "1", "--batches-per-epoch", "1", "--batch-size", "2", "--seq-len", "10",
            "--hidden", "4", "--no-progress"],
    "evaluate": ["--n-transient", "5", "--n-bins", "5"],
}


def tiny(argv: list[str]) -> list[str]:
    """``argv`` with the options of the longest matching start in :data:`TINY` appended."""
    starts = [k for k in TINY if argv[:len(k.split())] == k.split()]
    return [*argv, *TINY[max(starts, key=len)]] if starts else argv


def put_named_files(folder) -> None:
    """The files the README's commands read and do not write themselves."""
    import torch

    class LabNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.rnn = torch.nn.GRU(2, 6, batch_first=True)
            self.readout = torch.nn.Linear(6, 1)

    torch.save(LabNet().state_dict(), folder / "lab_model.pt")
    np.savez(folder / "plrnn.npz", A=[0.5, -0.5], W=[[0.0, 0.9], [0.9, 0.0]], h=[0.1, 0.0])
    t = np.arange(400) * 0.1
    np.save(folder / "recording.npy", np.stack([np.sin(t), np.cos(t), np.sin(2 * t)], 1))  # (time, channel)
    (folder / "study.toml").write_text('seeds = 2\n[task]\nname = "flipflop"\nn_bits = 1\n'
                                       '[model]\nname = "LeakyRNN"\n[training]\nn_iterations = 2\n'
                                       '[grid]\n"model.n_units" = [4, 8]\n')


@pytest.mark.slow
def test_readme_commands_run_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    put_named_files(tmp_path)
    for page, command in COMMANDS:
        if page != "README.md":
            continue
        argv = shlex.split(command)[1:]
        status = main(tiny(argv))
        out = capsys.readouterr()
        assert status == 0, f"{command}\n{out.err[-1500:]}"
    written = {"model.pt", "romo.pt", "fps.nc", "fps.png", "manifolds.nc", "manifolds.png", "fit.pt"}
    assert written <= {p.name for p in tmp_path.iterdir()}
