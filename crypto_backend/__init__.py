"""BLS12-381 for the consensus ciphersuite BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_.

Minimal first version (sk_to_pk, sign, verify on blst); the full backend with
batching, lanes and the arkworks second backend replaces it.
"""

from __future__ import annotations

from pyblst import BlstP1Element, BlstP2Element, final_verify, miller_loop

DST = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
_G1_GENERATOR = BlstP1Element.uncompress(
    bytes.fromhex(
        "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac58"
        "6c55e83ff97a1aeffb3af00adb22c6bb"
    )
)
_G1_IDENTITY = BlstP1Element()


class BlsError(ValueError):
    """Malformed input to a BLS function that returns bytes."""


def _check_secret(sk: int) -> None:
    if not 0 < sk < CURVE_ORDER:
        raise BlsError("secret key must be in [1, r - 1]")


def sk_to_pk(sk: int) -> bytes:
    _check_secret(sk)
    return bytes(_G1_GENERATOR.scalar_mul(sk).compress())


def sign(sk: int, message: bytes) -> bytes:
    _check_secret(sk)
    return bytes(BlstP2Element.hash_to_group(message, DST).scalar_mul(sk).compress())


def verify(pubkey: bytes, message: bytes, signature: bytes) -> bool:
    try:
        pk = BlstP1Element.uncompress(pubkey)
        sig = BlstP2Element.uncompress(signature)
    except ValueError:
        return False
    if pk == _G1_IDENTITY:
        return False
    hashed = BlstP2Element.hash_to_group(message, DST)
    return bool(final_verify(miller_loop(pk, hashed), miller_loop(_G1_GENERATOR, sig)))


def sign_many(sks: list[int], message: bytes) -> list[bytes]:
    """Placeholder until the batched backend lands: one `sign` per key."""
    return [sign(sk, message) for sk in sks]
