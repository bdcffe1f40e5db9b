"""Atomic writes: killed runs leave no temporaries; a pair of files is replaced together or not at all."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from neurodyn._result import remove_stale_temporaries, write_atomically, write_atomically_together
from neurodyn.cli._common import check_outputs


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def hidden(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_temporaries_of_dead_processes_are_removed_by_the_next_write(tmp_path):
    out = tmp_path / "model.pt"
    out.write_bytes(b"old")
    stale = tmp_path / f".model.pt.{dead_pid()}.abcd1234.tmp"
    stale.write_bytes(b"half a checkpoint")
    alive = tmp_path / f".model.pt.{os.getppid()}.efgh5678.tmp"  # a running process is still writing
    alive.write_bytes(b"in progress")
    write_atomically(out, lambda tmp: open(tmp, "wb").write(b"new"))
    assert out.read_bytes() == b"new"
    assert hidden(tmp_path) == [alive.name]


def test_temporaries_without_a_process_id_are_removed_after_an_hour(tmp_path):
    out = tmp_path / "fp.nc"
    old, recent = tmp_path / ".fp.nc.k2j4x9_q.tmp", tmp_path / ".fp.nc.a8b7c6d5.tmp"
    for p in (old, recent):
        p.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert remove_stale_temporaries(out) == [old]
    assert hidden(tmp_path) == [recent.name]


def test_commands_remove_leftovers_at_start_up(tmp_path):
    stale = [tmp_path / f".fp.nc.{dead_pid()}.x1.tmp", tmp_path / f".fp.png.{dead_pid()}.x2.tmp"]
    for p in stale:
        p.write_bytes(b"x")
    check_outputs(tmp_path / "fp.nc", tmp_path / "fp.png", figures=[tmp_path / "fp.png"])
    assert hidden(tmp_path) == []


def test_a_pair_is_replaced_together_or_not_at_all(tmp_path):
    nc, png = tmp_path / "fp.nc", tmp_path / "fp.png"
    nc.write_bytes(b"old result")
    png.write_bytes(b"old figure")

    def fail(tmp):
        raise RuntimeError("the figure could not be drawn")

    with pytest.raises(RuntimeError):
        write_atomically_together({nc: lambda tmp: open(tmp, "wb").write(b"new result"), png: fail})
    assert (nc.read_bytes(), png.read_bytes()) == (b"old result", b"old figure")
    assert hidden(tmp_path) == []
    write_atomically_together({nc: lambda tmp: open(tmp, "wb").write(b"new result"),
                               png: lambda tmp: open(tmp, "wb").write(b"new figure")})
    assert (nc.read_bytes(), png.read_bytes()) == (b"new result", b"new figure")
    assert hidden(tmp_path) == []
