"""Each sub-command registers itself: ``build_parser(COMMAND)`` parses its arguments into the namespace
its ``run`` reads, and sets that ``run`` as ``func``."""

import importlib

import pytest

from neurodyn.cli.main import COMMANDS, build_parser

#: a command line of each sub-command and attributes it must parse to
CASES = {
    "tasks": (["tasks"], {}),
    "train": (["train", "flipflop", "--n-bits", "2", "--n-units", "16"],
              {"task": "flipflop", "task__n_bits": 2, "n_units": 16}),  # task options: task__<field>
    "fixedpoints": (["fixedpoints", "model.pt", "--n-inits", "16"], {"model": "model.pt", "n_inits": 16}),
    "fit": (["fit", "recording.npy", "--model", "plrnn", "--latent", "8"],
            {"data": "recording.npy", "model": "plrnn", "latent": 8}),
    "evaluate": (["evaluate", "fit.pt", "--pe-steps", "5"], {"fit": "fit.pt", "data": None, "pe_steps": 5}),
    "manifolds": (["manifolds", "model.npz", "--arch", "plrnn", "--max-depth", "4"],
                  {"model": "model.npz", "arch": "plrnn", "max_depth": 4}),
    "sweep": (["sweep", "study.toml", "--out", "runs/study", "--workers", "0"],
              {"spec": "study.toml", "out": "runs/study", "workers": 0, "cluster": None}),
}


def test_every_command_has_a_case():
    assert sorted(CASES) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_command_parses_its_arguments_and_runs_its_run(command):
    argv, expected = CASES[command]
    args = build_parser(command).parse_args(argv)
    assert args.func is importlib.import_module(f"neurodyn.cli.{command}").run
    assert {name: getattr(args, name) for name in expected} == expected
