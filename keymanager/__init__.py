"""keymanager."""
