"""Fixed parameters of BLS12-381 and of the consensus ciphersuite."""

from __future__ import annotations

from typing import Final

#: Domain separation tag of the consensus ciphersuite (proof-of-possession scheme).
DST: Final = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"

#: Order r of the prime subgroups G1 and G2; secret keys live in [1, r - 1].
CURVE_ORDER: Final = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001

PUBKEY_LENGTH: Final = 48
SIGNATURE_LENGTH: Final = 96

#: Compressed encodings of the identity (point at infinity): the compression and
#: infinity flags set, every other bit zero.
G1_POINT_AT_INFINITY: Final = b"\xc0" + b"\x00" * (PUBKEY_LENGTH - 1)
G2_POINT_AT_INFINITY: Final = b"\xc0" + b"\x00" * (SIGNATURE_LENGTH - 1)

#: Compressed generator of G1 (the base point of public keys).
G1_GENERATOR: Final = bytes.fromhex(
    "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac58"
    "6c55e83ff97a1aeffb3af00adb22c6bb"
)

#: Bits of the random weights of a batch check: a forged set survives with
#: probability at most 2**-64.
BATCH_WEIGHT_BITS: Final = 64
