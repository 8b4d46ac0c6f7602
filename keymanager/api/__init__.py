"""The standard Keymanager API (ethereum/keymanager-APIs) served by the validator client.

Wiring, from a running validator::

    context = KeymanagerContext(store=store, record=record, signer=signing,  # a KeymanagerSigner
                                genesis_validators_root=chain.genesis_validators_root,
                                resolve_validator_index=beacon_index_resolver(beacon))
    runner = await start_keymanager_server(context, host, port, token_file)
    ...
    await runner.cleanup()

docs/keymanager.md describes the API for operators.
"""

from keymanager.api.context import (
    DEFAULT_GAS_LIMIT,
    KeyDefaults,
    KeymanagerContext,
    KeymanagerRecord,
    KeymanagerSigner,
    ValidatorIndexResolver,
    beacon_index_resolver,
)
from keymanager.api.http import MAX_BODY_BYTES
from keymanager.api.keys import DeleteResult, KeyChanges, KeyStatus, Status
from keymanager.api.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    bound_port,
    create_app,
    start_keymanager_server,
)
from keymanager.api.token import (
    TOKEN_FILE_NAME,
    TokenFileError,
    default_token_path,
    load_or_create_token,
)

__all__ = [
    "DEFAULT_GAS_LIMIT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "TOKEN_FILE_NAME",
    "DeleteResult",
    "KeyChanges",
    "KeyDefaults",
    "KeyStatus",
    "KeymanagerContext",
    "KeymanagerRecord",
    "KeymanagerSigner",
    "Status",
    "TokenFileError",
    "ValidatorIndexResolver",
    "beacon_index_resolver",
    "bound_port",
    "create_app",
    "default_token_path",
    "load_or_create_token",
    "start_keymanager_server",
]
