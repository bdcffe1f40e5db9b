"""Lyapunov spectra of any model by the QR method (Benettin et al. 1980)."""

from neurodyn.analysis.lyapunov._result import LyapunovResult
from neurodyn.analysis.lyapunov._spectrum import lyapunov_spectrum

__all__ = ["LyapunovResult", "lyapunov_spectrum"]
