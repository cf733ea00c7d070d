"""Extension objects (core spec, "Extension definition"): the one parser of ``{"name": ...,
"configuration": {...}, "must_understand": ...}`` objects and their short-hand names, and the one
check of configuration members.  Data types, chunk grids, chunk key encodings, codecs and storage
transformers are all read through :func:`parse_extension`; every codec's ``from_json`` and every
other extension's configuration goes through :func:`config_members`."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..errors import MetadataError

# Registered names (core spec, "Extension naming"); URIs are still accepted for old extensions.
_NAME_RE = re.compile(r"^[a-z][a-z0-9\-_.]+$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$")
_MEMBERS = frozenset({"name", "configuration", "must_understand"})


class Extension(NamedTuple):
    """A parsed extension object: its name, its configuration (``{}`` when absent) and whether an
    implementation that does not know ``name`` must refuse the metadata."""

    name: str
    configuration: dict[str, Any]
    must_understand: bool


_VALID_SEEN: set[str] = set()  # names already found valid (metadata repeats a few names often)
_new_tuple = tuple.__new__


def valid_extension_name(name: str) -> bool:
    if name in _VALID_SEEN:
        return True
    if not (_NAME_RE.fullmatch(name) or _URI_RE.fullmatch(name)):
        return False
    if len(_VALID_SEEN) < 1024:
        _VALID_SEEN.add(name)
    return True


def _label(what: str, name: str | None) -> str:
    return what if name is None else f"{what} {name!r}"


def configuration_object(conf: Any, what: str, name: str | None = None) -> dict[str, Any]:
    """``conf`` when it is a JSON object; MetadataError otherwise ("MUST be an object")."""
    if not isinstance(conf, dict):
        raise MetadataError(f"{_label(what, name)}: 'configuration' must be an object, got {conf!r}")
    return conf


def parse_extension(
    obj: Any, what: str, *, ignorable: bool = True, unknown: type[MetadataError] = MetadataError
) -> Extension:
    """Parse an extension object or short-hand name found where ``what`` (e.g. ``"codec"``) is expected.

    ``ignorable=False`` is for the extension points where the spec does not support
    ``"must_understand": false`` (data type, chunk grid, chunk key encoding): the flag is still
    checked to be a boolean, but the result always has ``must_understand=True``.  A name that is
    not a valid extension name can name no known extension: it raises ``unknown`` (e.g.
    UnknownCodecError).  Every other malformation raises MetadataError naming ``what``.
    """
    if isinstance(obj, str):
        name, conf, must = obj, {}, True
    elif isinstance(obj, dict):
        name = obj.get("name")  # type: ignore[assignment]  # checked to be a str just below
        if not isinstance(name, str):
            raise MetadataError(f"{what}: an extension object needs a string 'name', got {obj!r}")
        if not _MEMBERS.issuperset(obj):
            raise MetadataError(f"{what} {name!r}: unexpected members {sorted(set(obj) - _MEMBERS)}")
        conf = configuration_object(obj["configuration"], what, name) if "configuration" in obj else {}
        must = obj.get("must_understand", True)
        if not isinstance(must, bool):
            raise MetadataError(f"{what} {name!r}: 'must_understand' must be a boolean, got {must!r}")
    else:
        raise MetadataError(f"{what} must be a name or an extension object, got {obj!r}")
    if name not in _VALID_SEEN and not valid_extension_name(name):
        raise unknown(f"{what}: {name!r} is not a valid extension name")
    return _new_tuple(Extension, (name, conf, must or not ignorable))  # (Extension(...) without its slow __new__)


def config_members(conf: Any, allowed: frozenset[str] | set[str], what: str, name: str | None = None) -> dict[str, Any]:
    """The configuration object ``conf`` (``None``: none given, i.e. ``{}``) of extension ``name``
    (messages say ``what 'name'``), refusing members outside ``allowed``.  The one check of
    configuration members, for every extension."""
    out = {} if conf is None else configuration_object(conf, what, name)
    if not allowed.issuperset(out):
        raise MetadataError(f"{_label(what, name)}: unknown configuration members {sorted(set(out) - allowed)}")
    return out
