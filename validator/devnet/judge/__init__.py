"""The judge: what the chain checks in everything the client sends, and in which order.

Signatures first, against signing roots the judge computes itself
(:mod:`~validator.devnet.judge.signing_roots`), in one batch per request
(:mod:`~validator.devnet.judge.signatures`); then the slasher
(:mod:`~validator.devnet.judge.slasher`); then the chain's rules. The intake
of each kind of submission is a module: duty messages (attestations,
aggregates, sync committee messages and contributions), blocks, operations.
"""
