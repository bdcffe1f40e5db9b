"""Where the example recordings are looked up: NEURODYN_DATA first, then shared/data above the working
directory; a missing recording is None, a NEURODYN_DATA that is not a folder a one-line error."""

import pytest

from neurodyn.io import find_recordings


def test_the_variable_wins_and_a_missing_recording_is_none(tmp_path, monkeypatch):
    (tmp_path / "eeg").mkdir()
    monkeypatch.setenv("NEURODYN_DATA", str(tmp_path))
    assert find_recordings() == tmp_path
    assert find_recordings("eeg") == tmp_path / "eeg"
    assert find_recordings("lfp") is None


def test_shared_data_is_found_upwards_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "shared" / "data" / "ecg").mkdir(parents=True)
    (tmp_path / "project" / "docs").mkdir(parents=True)
    monkeypatch.delenv("NEURODYN_DATA", raising=False)
    monkeypatch.chdir(tmp_path / "project" / "docs")
    assert find_recordings("ecg") == tmp_path / "shared" / "data" / "ecg"


def test_a_variable_naming_no_folder_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURODYN_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(NotADirectoryError, match="NEURODYN_DATA names .*nowhere.*; set it to the recordings"):
        find_recordings("ecg")


def test_a_missing_recording_with_a_stand_in_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "eeg").mkdir()
    monkeypatch.setenv("NEURODYN_DATA", str(tmp_path))
    assert find_recordings("lfp", stand_in="a synthetic rhythm instead of the LFP") is None
    note = capsys.readouterr().out
    assert note == ("NOTE: the shared data folder was not found (set NEURODYN_DATA to it); fitting a "
                    "synthetic rhythm instead of the LFP.\n")
    assert find_recordings("eeg", stand_in="anything") == tmp_path / "eeg"
    assert capsys.readouterr().out == ""
