"""Old path kept only for keymanager/api, which imports it until its own branch drops
every import of validator (issue 10). tests/test_import_layout.py fails once nothing
imports this module: then delete it."""

from validator.signing.types import RefusalReason, SigningRefusedError

__all__ = ["RefusalReason","" "SigningRefusedError"]
