"""What the validator does each slot.

The scheduler and slot clock, the duty tracker, the attester, proposer and
sync-committee duties, aggregator selection, the context they share and their
metrics.
"""
