"""The SIMD dispatch of the native core: which code runs its 8-lane kernels.

``VALIDATOR_BLS_SIMD`` is read once, when ``crypto_backend`` is imported:

- ``auto`` (the default): the AVX-512 IFMA kernels where the CPU has them, else
  blst's own code (``info()["simd"]`` says ``"avx512ifma"`` or ``"none"``);
- ``off``: blst's own code only, no lane kernel (``"none"``);
- ``portable``: the lane kernels on plain 64-bit code (``"portable"``): for tests on
  any host, slower than blst, never a default;
- ``require``: the IFMA kernels, or an error at start where the CPU lacks them.

A value that cannot be honoured (``require`` without IFMA, an unknown word) makes
``info()`` and the first use of the ``blst`` backend raise ``ValueError`` with the
reason, so ``validator run`` stops at start with that one line. ``configure``
changes the mode later in the process (the tests run every path in one process).
"""

from __future__ import annotations

import os
from typing import Final

from crypto_backend import _native

SIMD_ENV: Final = "VALIDATOR_BLS_SIMD"
MODES: Final = ("auto", "off", "portable", "require")
#: What ``info()["simd"]`` may say.
PATHS: Final = ("avx512ifma", "portable", "none")

_start_error: str | None = None
_mode = "off"


def configure(mode: str) -> str:
    """Apply a mode now; the path it chose. Raises ValueError when it cannot be
    honoured (the path in use is then left as it was)."""
    global _start_error, _mode
    path = _native.set_simd(mode)
    _start_error = None
    _mode = mode
    return path


def mode() -> str:
    """The mode last applied (``auto``, ``off``, ``portable`` or ``require``)."""
    return _mode


def path() -> str:
    """The path the native kernels take: ``"avx512ifma"``, ``"portable"`` or ``"none"``.
    Raises ValueError when ``VALIDATOR_BLS_SIMD`` could not be honoured."""
    check()
    return _native.simd_path()


def check() -> None:
    """Raise ValueError when ``VALIDATOR_BLS_SIMD`` could not be honoured at import."""
    if _start_error is not None:
        raise ValueError(_start_error)


def ifma_available() -> bool:
    """Whether this CPU runs AVX-512F and AVX-512 IFMA."""
    return _native.ifma_available()


def _configure_from_environment() -> None:
    global _start_error
    mode = os.environ.get(SIMD_ENV, "").strip().lower() or "auto"
    try:
        configure(mode)
    except ValueError as error:
        _start_error = str(error)


_configure_from_environment()
