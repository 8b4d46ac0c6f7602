"""crypto_backend."""
