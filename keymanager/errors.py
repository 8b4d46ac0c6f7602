"""Errors of the keymanager package, in one light module so that every part
(including the spawned decryption workers) raises and catches the same classes.

Keystore content (`KeystoreError` family): the Keymanager API answers these per
key with status `error` and the message. Store errors: `UnknownKeyError` is 404,
`DuplicateKeyError` is the `duplicate` status, `StoreCorruptionError` and
`KeystoreLoadError` are server-side problems (500) that stop the validator at
start-up.
"""

from __future__ import annotations


class KeystoreError(ValueError):
    """A keystore that cannot be used; the base of every keystore refusal."""


class MalformedKeystoreError(KeystoreError):
    """Not a well-formed EIP-2335 keystore (bad JSON, missing or ill-typed fields)."""


class UnsupportedKeystoreError(KeystoreError):
    """Well-formed, but names a KDF, PRF, checksum, cipher or version this client does not read."""


class WrongPasswordError(KeystoreError):
    """The checksum does not match: the password is wrong (or the keystore was altered)."""


class PubkeyMismatchError(KeystoreError):
    """The decrypted secret does not give the public key the keystore names."""


class InvalidSecretError(KeystoreError):
    """The decrypted secret is not a usable BLS secret key (zero or not below the group order)."""


class StoreError(Exception):
    """Base of the key store's errors."""


class StoreCorruptionError(StoreError):
    """Something in the validators directory cannot be trusted; the message names the file."""


class KeystoreLoadError(StoreError):
    """A stored keystore could not be decrypted with its stored password; names the file."""


class UnknownKeyError(StoreError):
    """The public key is neither a local keystore nor a remote key of this store."""


class DuplicateKeyError(StoreError):
    """The public key is already known to the store."""


class LocalRemoteConflictError(DuplicateKeyError):
    """A local keystore and a remote key would exist for the same public key."""


class ExitRefusedError(Exception):
    """The validator did not sign a voluntary exit; `key_unknown` when it holds no such key
    (or the key went away meanwhile), which the Keymanager API answers 404 rather than 400."""

    def __init__(self, message: str, *, key_unknown: bool = False) -> None:
        super().__init__(message)
        self.key_unknown = key_unknown


class RemoteKeyRefusedError(Exception):
    """This process does not sign with remote keys (``validator signer`` serves its own)."""


class NoCurrentEpochError(Exception):
    """The chain has no current epoch (its genesis lies ahead)."""
