"""Keys reach the signer from keymanager's store: load_all's pubkey -> secret map is what
add_keys takes, and a key deleted from the store leaves the signer through remove_keys."""

from __future__ import annotations

from pathlib import Path

import pytest

import crypto_backend
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtection
from tests.support.keystores import PASSWORD, cheap_keystore_json
from tests.validator.signing.support import GVR, Clock, attestation_data, make_chain
from validator.consensus.interop import interop_secret_key
from validator.consensus.signing_roots import attestation_signing_root
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason, SigningRefusedError


async def test_keys_loaded_from_the_store_sign(tmp_path: Path) -> None:
    store = ValidatorStore(tmp_path)
    imported = [
        store.import_keystore(cheap_keystore_json(interop_secret_key(index)), PASSWORD)
        for index in (30, 31)
    ]
    loaded = store.load_all(progress=False)
    assert sorted(loaded) == sorted(imported)
    with SlashingProtection.open(tmp_path, GVR, register=imported) as record:
        signer = Signer(make_chain(), record, clock=Clock())
        await signer.add_keys(loaded)
        data = attestation_data(39, 3, 4)
        results = await signer.sign_attestations([AttestationRequest(pk, data) for pk in imported])
        # The root itself is checked independently in test_signer_kinds.
        root = attestation_signing_root(signer.chain, data)
        for pubkey, result in zip(imported, results, strict=True):
            assert result.signature is not None
            assert crypto_backend.verify(pubkey, root, result.signature)
        # Deleting from the store and the signer: the key signs nothing afterwards.
        assert store.delete_keystore(imported[0])
        assert await signer.remove_keys([imported[0]]) == [imported[0]]
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_randao_reveal(imported[0], 5)
        assert refused.value.reason is RefusalReason.KEY_REMOVED
        assert len(await signer.sign_randao_reveal(imported[1], 5)) == 96
