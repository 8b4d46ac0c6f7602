"""EIP-3076 interchange format (version 5): strict streaming parse, minimal-form rendering.

Parsing reduces every key to its highest block slot, attestation source and attestation
target (each independently, as the minimal strategy asks) and never keeps the history
itself, so memory stays bounded by the number of keys, not the size of the file.

Rooms: `model` (the parse result and the value checks both parsers share), `exact` (any
valid document, and the error messages), `fast` (the common layout, falling back to the
exact parser when unsure), `parsing` (`parse_interchange`, which picks between them) and
`render` (the record's one layout, in pieces per entry).
"""

from slashing_protection.interchange.model import (
    FORMAT_VERSION,
    PUBKEY_BYTES,
    ROOT_BYTES,
    InterchangeSource,
    ParsedInterchange,
    Progress,
    parse_hex,
    parse_pubkey,
)
from slashing_protection.interchange.parsing import parse_interchange
from slashing_protection.interchange.render import (
    RENDER_FOOTER,
    RENDER_SEPARATOR,
    render_entry_end,
    render_entry_ends,
    render_entry_start,
    render_header,
    render_minimal,
    write_minimal,
)

__all__ = [
    "FORMAT_VERSION",
    "PUBKEY_BYTES",
    "RENDER_FOOTER",
    "RENDER_SEPARATOR",
    "ROOT_BYTES",
    "InterchangeSource",
    "ParsedInterchange",
    "Progress",
    "parse_hex",
    "parse_interchange",
    "parse_pubkey",
    "render_entry_end",
    "render_entry_ends",
    "render_entry_start",
    "render_header",
    "render_minimal",
    "write_minimal",
]
