"""Zarr v2 codec configurations (numcodecs' ``{"id": ..., ...}`` objects) to zarrbolt's codec
objects and back.

A ``.zarray`` names its compressor and filters by numcodecs ids.  Each maps onto the codec class
zarrbolt uses for the same bytes in Zarr v3, so a v2 chunk goes through the same per-codec code
and the same fused C plans as a v3 one:

* ``blosc``: :class:`~zarrbolt.codecs.blosc.BloscCodec` (numcodecs' numeric ``shuffle``:
  -1 automatic, 0 none, 1 byte, 2 bit; ``typesize`` is the item size of the data blosc sees);
* ``zstd``, ``gzip``: zarrbolt's ``zstd`` and ``gzip`` codecs (numcodecs' default level 1);
* every other id ``X`` whose v3 form ``numcodecs.X`` is registered (``zlib``, ``lz4``,
  ``delta``, ``fixedscaleoffset``, ``shuffle``, ``bitround``, ``bz2``, ``crc32``, ...): that
  codec, configured with the same members;
* ``vlen-utf8``, ``vlen-bytes`` (object arrays): the codecs of the same name, the array -> bytes
  step of the chain.

* any other id the installed numcodecs knows (``base64``, ``pcodec``, ``zfpy``, imagecodecs'
  codecs, ...): numcodecs' codec (:mod:`zarrbolt.codecs.numcodecs.external`).

Anything else is an :class:`~zarrbolt.errors.UnknownCodecError` naming the id, where it was
found and the package to install."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataError, UnknownCodecError
from .abc import Codec
from .numcodecs import external
from .registry import get_codec_class, registered_codecs

# numcodecs.Blosc's numbering of the shuffle modes
BLOSC_AUTOSHUFFLE = -1
_BLOSC_SHUFFLE_NAMES = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}
_BLOSC_SHUFFLE_NUMBERS = {v: k for k, v in _BLOSC_SHUFFLE_NAMES.items()}
_BLOSC_DEFAULTS = {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
_NUMCODECS_DEFAULT_LEVEL = 1  # numcodecs' Zstd and GZip
_ZLIB_DEFAULT_LEVEL = 6
_ZSTD_MIN_LEVEL, _ZSTD_MAX_LEVEL = -131072, 22
OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2", "pickle")
_VLEN_IDS = ("vlen-utf8", "vlen-bytes")


def _members(conf: dict[str, Any], allowed: set[str], codec_id: str, where: str) -> dict[str, Any]:
    extra = sorted(set(conf) - allowed - {"id"})
    if extra:
        raise MetadataError(f"{where}: codec {codec_id!r} has unknown members {extra}")
    return {k: v for k, v in conf.items() if k != "id"}


def _int(v: Any, what: str, where: str) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise MetadataError(f"{where}: {what} must be an integer, got {v!r}")
    return int(v)


def codec_id(conf: Any, where: str) -> str:
    """The ``id`` of one v2 codec configuration; MetadataError naming ``where`` when malformed."""
    if not isinstance(conf, dict):
        raise MetadataError(f"{where} must be an object with an 'id', got {conf!r}")
    cid = conf.get("id")
    if not isinstance(cid, str) or not cid:
        raise MetadataError(f"{where} has no codec 'id' (a non-empty string): {conf!r}")
    return cid


def blosc_shuffle_name(shuffle: Any, itemsize: int, where: str) -> str:
    """numcodecs' shuffle number as the v3 name; -1 (automatic) is bit shuffle for 1-byte items,
    byte shuffle otherwise (numcodecs' rule)."""
    shuffle = _int(shuffle, "blosc 'shuffle'", where)
    if shuffle == BLOSC_AUTOSHUFFLE:
        return "bitshuffle" if itemsize == 1 else "shuffle"
    if shuffle not in _BLOSC_SHUFFLE_NAMES:
        raise MetadataError(f"{where}: blosc 'shuffle' must be -1, 0, 1 or 2, got {shuffle}")
    return _BLOSC_SHUFFLE_NAMES[shuffle]


def codec_from_v2(conf: Any, *, itemsize: int, where: str) -> Codec:
    """The zarrbolt codec for the v2 configuration ``conf``.  ``itemsize``: the item size of the
    data this codec receives when encoding (blosc's typesize); ``where`` names the document and
    member in errors (e.g. ``"'a/.zarray' compressor"``)."""
    cid = codec_id(conf, where)
    try:
        if cid == "blosc":
            c = {**_BLOSC_DEFAULTS, **_members(conf, {"cname", "clevel", "shuffle", "blocksize", "typesize"}, cid, where)}
            cls: Any = get_codec_class("blosc")
            shuffle = blosc_shuffle_name(c["shuffle"], itemsize, where)
            return cls(c["cname"], c["clevel"], shuffle, max(1, min(itemsize, 255)), c["blocksize"])  # type: ignore[no-any-return]
        if cid == "zstd":
            c = _members(conf, {"level", "checksum"}, cid, where)
            level = _int(c.get("level", _NUMCODECS_DEFAULT_LEVEL), "zstd 'level'", where)
            # numcodecs passes any level to libzstd, which clamps it to its range
            level = max(_ZSTD_MIN_LEVEL, min(level, _ZSTD_MAX_LEVEL))
            return get_codec_class("zstd")(level, c.get("checksum", False))  # type: ignore[call-arg]
        if cid == "gzip":
            c = _members(conf, {"level"}, cid, where)
            level = _int(c.get("level", _NUMCODECS_DEFAULT_LEVEL), "gzip 'level'", where)
            if level == -1:  # zlib's default, as numcodecs.GZip takes it
                level = _ZLIB_DEFAULT_LEVEL
            return get_codec_class("gzip")(level)  # type: ignore[call-arg]
        known = registered_codecs()
        if cid in _VLEN_IDS and cid in known:
            _members(conf, set(), cid, where)
            return get_codec_class(cid).from_json(None)
        name = f"numcodecs.{cid}"
        if name in known:
            return get_codec_class(name).from_json({k: v for k, v in conf.items() if k != "id"})
    except UnknownCodecError:
        raise
    except MetadataError as e:
        raise MetadataError(f"{where}: {e}") from None
    check_known(conf, where)
    return external.v2_codec(conf, where)  # the long tail: numcodecs runs it


def check_known(conf: Any, where: str) -> None:
    """UnknownCodecError naming ``where`` unless zarrbolt has a codec for this configuration's id
    or the installed numcodecs knows it (:mod:`zarrbolt.codecs.numcodecs.external`; the error
    then names the package to install); checked before anything else of a document, so an
    unknown codec is named as such."""
    cid = codec_id(conf, where)
    known = registered_codecs()
    if cid in ("blosc", "zstd", "gzip") or f"numcodecs.{cid}" in known or (cid in _VLEN_IDS and cid in known):
        return
    if cid in OBJECT_CODEC_IDS and cid not in external.UNSAFE_IDS:
        raise UnknownCodecError(f"{where}: the object codec {cid!r} is not supported (vlen-utf8 and vlen-bytes are)")
    external.numcodecs_codec(conf, where)


def codec_to_v2(codec: Codec) -> dict[str, Any]:
    """The v2 configuration (numcodecs' form) of a zarrbolt codec; MetadataError for a codec with
    no Zarr v2 form (``bytes``, ``transpose``, ``sharding_indexed``, ``crc32c``, ...)."""
    doc = codec.to_json()
    name = doc["name"]
    conf = dict(doc.get("configuration") or {})
    if name == "blosc":
        out = {"id": "blosc", "cname": conf["cname"], "clevel": conf["clevel"],
               "shuffle": _BLOSC_SHUFFLE_NUMBERS[conf["shuffle"]], "blocksize": conf.get("blocksize", 0)}
        return out
    if name == "zstd":
        out = {"id": "zstd", "level": conf["level"]}
        if conf.get("checksum"):
            out["checksum"] = True
        return out
    if name == "gzip":
        return {"id": "gzip", "level": conf["level"]}
    if name in _VLEN_IDS:
        return {"id": name}
    if name.startswith("numcodecs."):
        return {"id": name.removeprefix("numcodecs."), **conf}
    raise MetadataError(f"codec {name!r} has no Zarr v2 form (v2 takes numcodecs codecs as filters and compressor)")


def v2_for_writing(conf: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A v2 configuration as zarrbolt writes it into a new ``.zarray``: as given, or with a value
    read liberally normalised (gzip's ``level`` -1 as 6, a zstd ``level`` beyond libzstd's range
    clamped; see :meth:`~zarrbolt.codecs.abc.Codec.for_writing`) and a note saying so."""
    cid = conf.get("id")
    level = conf.get("level")
    if cid in ("gzip", "zstd") and isinstance(level, int) and not isinstance(level, bool):
        new = (_ZLIB_DEFAULT_LEVEL if level == -1 else level) if cid == "gzip" else \
            max(_ZSTD_MIN_LEVEL, min(level, _ZSTD_MAX_LEVEL))
        if new != level:
            return {**conf, "level": new}, f"codec {cid!r}: level {level} written as {new}"
        return conf, None
    name = f"numcodecs.{cid}"
    if isinstance(cid, str) and name in registered_codecs():
        codec = get_codec_class(name).from_json({k: v for k, v in conf.items() if k != "id"})
        new_codec, note = codec.for_writing()
        if new_codec is not codec:
            return codec_to_v2(new_codec), note
    return conf, None


def is_object_codec(conf: Any) -> bool:
    return isinstance(conf, dict) and conf.get("id") in OBJECT_CODEC_IDS
