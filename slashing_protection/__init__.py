"""Durable EIP-3076 slashing protection: the minimal record, its lock, interchange import/export."""
