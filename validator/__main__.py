"""``python -m validator``: the ``validator`` command."""

# Guarded: keystore decryption workers are spawned processes, which import the
# parent's __main__ as __mp_main__; they must not run the command again.
if __name__ == "__main__":
    from validator.cli import main

    main()
