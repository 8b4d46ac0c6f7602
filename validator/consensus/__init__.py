"""The consensus specification as the validator needs it.

Chain spec and presets, forks, domains, signing roots, the SSZ containers
(``ssz/``), hex encodings and the interop keys. Imports nothing else of
``validator``: every other room builds on this one.
"""
