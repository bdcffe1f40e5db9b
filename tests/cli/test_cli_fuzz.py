"""A smaller fuzz of the sub-commands through ``main`` in-process: garbage files and out-of-range option
values end with a non-zero exit and one error line on stderr, never a traceback."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from neurodyn.cli.main import main
from neurodyn.io import save_checkpoint
from neurodyn.models import PLRNN

CLI_FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
TINY_FIT = ["--epochs", "1", "--batches-per-epoch", "1", "--batch-size", "2", "--seq-len", "5",
            "--no-progress"]


def exit_status(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # argparse
        return int(stop.code or 0)


def assert_one_line_error(capsys, argv) -> None:
    status = exit_status(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status != 0, f"{argv} succeeded on garbage"
    assert err and "Traceback" not in "\n".join(err)
    errors = [line for line in err if ": error:" in line]
    assert len(errors) == 1 and errors[0] == err[-1], err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    model = save_checkpoint(tmp / "model.pt", PLRNN(0, 2, 2, seed=0))
    buf = io.BytesIO()
    np.save(buf, np.random.default_rng(0).normal(size=(60, 2)))
    return tmp, {".pt": model.read_bytes(), ".npy": buf.getvalue()}


@st.composite
def garbage(draw, clean: bytes) -> bytes:
    """Bytes that cannot be a valid file: empty, random, or a binary file cut short."""
    kind = draw(st.sampled_from(["empty", "random", "cut"]))
    if kind == "empty":
        return b""
    if kind == "random":
        magic = (b"PK", b"\x93NUMPY")
        return draw(st.binary(min_size=1, max_size=512).filter(lambda b: not b.startswith(magic)))
    return clean[: draw(st.integers(0, int(len(clean) * 0.95)))]


@pytest.mark.parametrize("command", [["fixedpoints"], ["manifolds"], ["evaluate"]])
def test_commands_reading_a_model_refuse_garbage(files, capsys, command):
    tmp, clean = files

    @CLI_FUZZ
    @given(data=garbage(clean[".pt"]))
    def run(data):
        (tmp / "bad.pt").write_bytes(data)
        assert_one_line_error(capsys, [*command, str(tmp / "bad.pt")])

    run()


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".csv", ".mat", ".nc"])
def test_fit_refuses_garbage_recordings(files, capsys, suffix):
    tmp, clean = files

    @CLI_FUZZ
    @given(data=garbage(clean[".npy"]))
    def run(data):
        if suffix == ".csv" and data:  # text that is not a table of numbers
            data = b"a,b\n" + data.replace(b"\n", b";") + b",x\n"
        (tmp / f"bad{suffix}").write_bytes(data)
        assert_one_line_error(capsys, ["fit", str(tmp / f"bad{suffix}"), "--out", str(tmp / "fit.pt"),
                                       "--overwrite", *TINY_FIT])

    run()


BAD_NUMBERS = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "-0.5", "x", ""])


def test_train_refuses_out_of_range_options(tmp_path, capsys):
    @CLI_FUZZ
    @given(flag=st.sampled_from(["--n-units", "--lr", "--batch-size", "--n-iterations", "--eval-every",
                                 "--weight-decay", "--clip-grad-norm"]), value=BAD_NUMBERS)
    def run(flag, value):
        ok_zero = flag in ("--weight-decay", "--clip-grad-norm", "--eval-every")  # 0 means "none" there
        if ok_zero and value == "0":
            value = "-1"
        assert_one_line_error(capsys, ["train", "flipflop", "--n-iterations", "1", "--n-units", "4",
                                       "--no-progress", "--out", str(tmp_path / "m.pt"), "--overwrite", flag,
                                       value])

    run()


def test_evaluate_refuses_garbage_test_data(files, capsys):
    tmp, clean = files
    t = np.arange(200) * 0.1
    np.save(tmp / "sine.npy", np.stack([np.sin(t), np.cos(t)], 1))
    assert main(["fit", str(tmp / "sine.npy"), "--model", "plrnn", "--out", str(tmp / "fit.pt"),
                 "--overwrite", *TINY_FIT]) == 0
    capsys.readouterr()

    @CLI_FUZZ
    @given(data=garbage(clean[".npy"]))
    def run(data):
        (tmp / "test.npy").write_bytes(data)
        argv = ["evaluate", str(tmp / "fit.pt"), str(tmp / "test.npy"), "--no-baselines"]
        assert_one_line_error(capsys, argv)

    run()
