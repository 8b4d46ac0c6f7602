"""validator."""
