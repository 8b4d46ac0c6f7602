"""Memoised roots for the hot paths: AttestationData roots, domains, attestation signing roots.

A slot's attestations nearly all carry the same AttestationData, so its root
and signing root are computed once and looked up for the rest.
"""

from __future__ import annotations

from validator.consensus.chain_preset import SimulatedChainConfig
from validator.devnet.judge.message_readers import AttestationDataFields
from validator.devnet.judge.signing_roots import BEACON_ATTESTER, JudgeRoots, signing_root

_LIMIT = 4096


class RootCache:
    """The judge's roots (:mod:`validator.devnet.judge.signing_roots`), the hot ones memoised."""

    def __init__(self, config: SimulatedChainConfig) -> None:
        self.judge = JudgeRoots(config)
        self._data_roots: dict[AttestationDataFields, bytes] = {}
        self._attestation_signing_roots: dict[AttestationDataFields, bytes] = {}
        self._sync_signing_roots: dict[tuple[int, bytes], bytes] = {}
        self._domains: dict[tuple[bytes, int], bytes] = {}

    def attestation_data_root(self, data: AttestationDataFields) -> bytes:
        root = self._data_roots.get(data)
        if root is None:
            if len(self._data_roots) >= _LIMIT:
                self._data_roots.clear()
            root = bytes(data.view().hash_tree_root())
            self._data_roots[data] = root
        return root

    def domain(self, domain_type: bytes, epoch: int) -> bytes:
        key = (domain_type, epoch)
        domain = self._domains.get(key)
        if domain is None:
            if len(self._domains) >= _LIMIT:
                self._domains.clear()
            domain = self.judge.domain(domain_type, epoch)
            self._domains[key] = domain
        return domain

    def attestation_signing_root(self, data: AttestationDataFields) -> bytes:
        root = self._attestation_signing_roots.get(data)
        if root is None:
            if len(self._attestation_signing_roots) >= _LIMIT:
                self._attestation_signing_roots.clear()
            root = signing_root(
                self.attestation_data_root(data), self.domain(BEACON_ATTESTER, data.target_epoch)
            )
            self._attestation_signing_roots[data] = root
        return root

    def sync_message_signing_root(self, slot: int, block_root: bytes) -> bytes:
        key = (slot, block_root)
        root = self._sync_signing_roots.get(key)
        if root is None:
            if len(self._sync_signing_roots) >= _LIMIT:
                self._sync_signing_roots.clear()
            root = self.judge.sync_committee_message(slot, block_root)
            self._sync_signing_roots[key] = root
        return root
