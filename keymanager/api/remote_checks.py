"""Judging one remote key definition (POST /eth/v1/remotekeys) without refusing the rest.

The spec answers that route with 200 and a status per key (no 400), so a definition that
is wrong gets `error` with its reason: a pubkey that is not 0x and 96 hex digits or not a
valid BLS public key (`key_validate`: on the curve, in the subgroup, not the identity),
or a URL that is not http(s) with a host, or that carries credentials (`user:pass@`),
which would then appear in every listing and log line that shows the URL.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import crypto_backend
from keymanager.pubkeys import parse_pubkey
from keymanager.settings import SettingsValueError, check_remote_url


def pubkey_problem(text: str) -> tuple[bytes | None, str | None]:
    """(the key, None) for a usable BLS public key, else (None, why not)."""
    try:
        pubkey = parse_pubkey(text)
    except ValueError as error:
        return None, f"pubkey: {error}"
    try:
        valid = crypto_backend.key_validate(pubkey)
    except crypto_backend.BlsError:
        valid = False
    if not valid:
        return None, "pubkey: not a valid BLS12-381 public key (KeyValidate fails)"
    return pubkey, None


def url_problem(url: str) -> str | None:
    """Why a remote signer URL is refused, or None."""
    try:
        check_remote_url(url)
    except SettingsValueError as error:
        return f"url: {error}"
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return (
            "url: a remote signer URL must not hold credentials (user:password@); they "
            "would be shown in listings and logs"
        )
    return None
