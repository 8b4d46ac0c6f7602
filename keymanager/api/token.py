"""The Keymanager API bearer token: its file, and checking a request's token.

The spec asks for a hex token of at least 256 bits in a file; a shorter or
non-hex token is refused. Without `--keymanager-token-file` the token lives in
`api-token.txt` in the validators
directory, created (mode 0600, written durably) with 32 random bytes when
absent and reused across restarts. A token file that was named but cannot be
read, or holds no usable token, is an error: the server does not start.

The token is never logged; its file's path is.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
import stat
from pathlib import Path

from slashing_protection.durable import write_durably

TOKEN_FILE_NAME = "api-token.txt"
TOKEN_BYTES = 32
TOKEN_FILE_MODE = 0o600
# The spec: a hex-encoded token of at least 256 bits (64 hex digits).
MIN_TOKEN_HEX_DIGITS = 64
_USABLE_TOKEN = re.compile(rf"[0-9a-fA-F]{{{MIN_TOKEN_HEX_DIGITS},4096}}")

log = logging.getLogger("keymanager.api")


class TokenFileError(Exception):
    """The token file cannot be read or created, or holds no usable token."""


def default_token_path(validators_dir: Path | str) -> Path:
    return Path(validators_dir) / TOKEN_FILE_NAME


def load_or_create_token(
    validators_dir: Path | str,
    token_file: Path | str | None = None,
    *,
    default_name: str = TOKEN_FILE_NAME,
    api: str = "Keymanager API",
) -> str:
    """The bearer token: read from `token_file`, or from (or newly written to)
    `<validators_dir>/<default_name>`. Raises `TokenFileError`. (`validator signer` keeps
    its own token the same way, under another name.)"""
    if token_file is not None:
        path = Path(token_file)
        token = _read_token(path, api)
        log.info("%s token read from %s", api, path)
        return token
    path = Path(validators_dir) / default_name
    if not os.path.lexists(path):
        token = secrets.token_hex(TOKEN_BYTES)
        try:
            write_durably(path, (token + "\n").encode("ascii"), mode=TOKEN_FILE_MODE)
        except OSError as error:
            raise TokenFileError(
                f"cannot create the {api} token file {path}: {error.strerror or error}"
            ) from None
        log.info("%s token created in %s (mode 0600)", api, path)
        return token
    token = _read_token(path, api)
    log.info("%s token read from %s", api, path)
    return token


def _read_token(path: Path, api: str) -> str:
    try:
        data = path.read_bytes()
        mode = os.stat(path).st_mode
    except OSError as error:
        raise TokenFileError(
            f"cannot read the {api} token file {path}: {error.strerror or error}"
        ) from None
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise TokenFileError(f"the {api} token file {path} is not ASCII text") from None
    if not _USABLE_TOKEN.fullmatch(token):
        found = f"{len(token)} characters" if token else "nothing"
        raise TokenFileError(
            f"the {api} token file {path} holds no usable token: the Keymanager API "
            f"standard asks for a hex-encoded token of at least 256 bits, that is at least "
            f"{MIN_TOKEN_HEX_DIGITS} hex digits on one line, and it holds {found} (make one "
            "with: openssl rand -hex 32)"
        )
    if stat.S_IMODE(mode) & 0o077:
        log.warning(
            "the %s token file %s can be read by other users (mode %o); chmod 600 it",
            api,
            path,
            stat.S_IMODE(mode),
        )
    return token


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison (the time does not depend on where they differ)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("ascii"))
