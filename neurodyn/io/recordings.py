"""Where the example recordings live: ``NEURODYN_DATA``, or a ``shared/data`` folder found upwards."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["find_recordings"]


def find_recordings(name: str = "", *, stand_in: str | None = None) -> Path | None:
    """The folder of the example recordings (or of one recording in it), or ``None`` when it is absent.

    The real recordings that neurodyn's examples and gallery fit (EEG, ECG, fMRI, macaque spike counts,
    LFP; each sub-folder's README gives source, citation and licence) are not shipped with the package.
    They are looked up, in order, in the folder named by the environment variable ``NEURODYN_DATA``,
    then in the first ``shared/data`` folder in the working directory or one of its parents, then in
    the first one above the installed package (a checkout's ``../shared/data``).

    Parameters
    ----------
    name : str
        A sub-folder of the recordings folder, e.g. ``"eeg_physionet_eegmmidb_s001r01"``; the default
        ``""`` returns the recordings folder itself.
    stand_in : str, optional
        What the caller fits instead when the folder is absent (``"a synthetic signal instead of the
        ECG recording"``); given, a missing folder prints one ``NOTE:`` line that says so.

    Returns
    -------
    pathlib.Path or None
        The existing folder, or ``None`` when it is not found (callers fall back to synthetic data or
        say what to set).

    Raises
    ------
    NotADirectoryError
        When ``NEURODYN_DATA`` is set to something that is not a folder.

    Examples
    --------
    >>> from neurodyn.io import find_recordings
    >>> folder = find_recordings("ecg_pecuzal5d")
    >>> folder is None or (folder / "README.md").is_file()
    True
    """
    given = os.environ.get("NEURODYN_DATA")
    if given:
        if not Path(given).is_dir():
            raise NotADirectoryError(f"NEURODYN_DATA names {given}, which is not a folder; "
                                     "set it to the recordings folder or unset it")
        roots = [Path(given)]
    else:
        starts = [Path.cwd(), Path(__file__).resolve().parent]
        roots = [d / "shared" / "data" for start in starts for d in (start, *start.parents)]
    folder = next((r for r in roots if r.is_dir()), None)
    if folder is None or not (folder / name).is_dir():
        if stand_in is not None:
            print("NOTE: the shared data folder was not found (set NEURODYN_DATA to it); "
                  f"fitting {stand_in}.")
        return None
    return folder / name
