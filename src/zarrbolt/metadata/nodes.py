"""Array and group metadata documents (``zarr.json``), parsed and validated to the letter of the
core spec: every mandatory member, the optional ones, and unknown members refused unless they are
extension objects marked ``"must_understand": false`` (those are kept and written back)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..codecs.abc import ChunkSpec, Codec
from ..codecs.registry import parse_codecs
from ..errors import MetadataError
from .chunk_grid import ChunkGrid, parse_chunk_grid, parse_int_list
from .chunk_key import DefaultChunkKeyEncoding, V2ChunkKeyEncoding, parse_chunk_key_encoding
from ._ext_obj import parse_extension
from .dtypes import DataType

if TYPE_CHECKING:
    from typing_extensions import Self

_ARRAY_KEYS = {
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "storage_transformers",
    "dimension_names",
}
_GROUP_KEYS = {"zarr_format", "node_type", "attributes"}


def _check_format(doc: Mapping[str, Any], node_type: str) -> None:
    zf = doc.get("zarr_format")
    if "zarr_format" not in doc:
        raise MetadataError("metadata has no 'zarr_format'")
    if isinstance(zf, bool) or zf != 3:
        raise MetadataError(f"zarr_format must be 3, got {zf!r}")
    if doc.get("node_type") != node_type:
        raise MetadataError(f"node_type must be {node_type!r}, got {doc.get('node_type')!r}")


def _split_unknown(doc: Mapping[str, Any], known: set[str], what: str) -> dict[str, Any]:
    """Unknown top-level members: kept when marked must_understand=false, refused otherwise."""
    extra: dict[str, Any] = {}
    for k, v in doc.items():
        if k in known:
            continue
        if k == "consolidated_metadata" and v is None:
            # zarr-python writes "consolidated_metadata": null in every group document.
            continue
        if isinstance(v, dict) and v.get("must_understand") is False:
            extra[k] = v
            continue
        raise MetadataError(
            f"{what} metadata has unknown member {k!r} (not marked \"must_understand\": false); refusing to open"
        )
    return extra


def _parse_attributes(doc: Mapping[str, Any]) -> dict[str, Any]:
    attrs = doc.get("attributes", {})
    if not isinstance(attrs, dict):
        raise MetadataError(f"'attributes' must be an object, got {type(attrs).__name__}")
    return attrs


def _dumps(obj: Any) -> bytes:
    try:
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise MetadataError(f"metadata is not JSON-serialisable: {e}") from None


@dataclass(frozen=True, eq=False)
class ArrayMetadata:
    shape: tuple[int, ...]
    data_type: DataType
    chunk_grid: ChunkGrid
    chunk_key_encoding: DefaultChunkKeyEncoding | V2ChunkKeyEncoding
    fill_value: Any
    codecs: tuple[Codec, ...]
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[Any, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    zarr_format = 3
    node_type = "array"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "shape", parse_int_list(list(self.shape), "shape", minimum=0))
        if not isinstance(self.data_type, DataType):
            set_(self, "data_type", DataType.from_numpy(self.data_type))
        if not isinstance(self.chunk_grid, ChunkGrid):
            raise MetadataError(f"unsupported chunk grid {self.chunk_grid!r}")
        self.chunk_grid.validate(self.shape)
        set_(self, "chunk_key_encoding", parse_chunk_key_encoding(self.chunk_key_encoding))
        set_(self, "fill_value", self.data_type.normalize_fill_value(self.fill_value))
        codecs = tuple(parse_codecs(list(self.codecs)))
        if not codecs:
            raise MetadataError("'codecs' must not be empty: it needs an array->bytes codec")
        set_(self, "codecs", codecs)
        if not isinstance(self.attributes, dict):
            raise MetadataError("'attributes' must be an object")
        if self.dimension_names is not None:
            names = self.dimension_names
            if isinstance(names, str) or not isinstance(names, Sequence):
                raise MetadataError(f"dimension_names must be an array of strings or nulls, got {names!r}")
            names = tuple(names)
            if len(names) != len(self.shape):
                raise MetadataError(f"dimension_names has {len(names)} entries, the array has {len(self.shape)} dimensions")
            for n in names:
                if n is not None and not isinstance(n, str):
                    raise MetadataError(f"dimension names must be strings or null, got {n!r}")
            set_(self, "dimension_names", names)
        if self.storage_transformers:
            raise MetadataError(
                f"storage transformers {list(self.storage_transformers)!r} are not supported; refusing to open"
            )
        # Validate the chain against the chunk representation (order, dtype support, shapes: of
        # every chunk edge the grid has); the bound chain is kept for the array (see bound_codecs),
        # so it is bound once per document.
        from ..codecs.chain import CodecChain

        chain = CodecChain(codecs)
        set_(self, "_bound_codecs", chain.bind(self.chunk_spec()))
        for shape in self.chunk_grid.representative_shapes():
            if shape != self.chunks:
                chain.bind(ChunkSpec(shape, self.data_type, self.fill_value))

    # ------------------------------------------------------------------ derived
    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape (of a grid whose chunks differ in shape: the longest edge along each
        dimension, the shape :meth:`chunk_spec` and :attr:`bound_codecs` are for)."""
        return self.chunk_grid.chunk_shape if self.chunk_grid.regular else self.chunk_grid.max_chunk_shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.data_type.numpy_dtype

    def chunk_spec(self) -> ChunkSpec:
        return ChunkSpec(self.chunks, self.data_type, self.fill_value)

    @property
    def bound_codecs(self) -> Any:
        """The codec chain (:class:`~zarrbolt.codecs.chain.BoundChain`) bound to :meth:`chunk_spec`,
        validated when this document was made."""
        return self._bound_codecs  # type: ignore[attr-defined]  # set by __post_init__ (frozen)

    def nchunks(self) -> int:
        return math.prod(self.chunk_grid.grid_shape(self.shape))

    def evolve(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)

    def resized(self, shape: Sequence[int]) -> Self:
        """This document for the array resized to ``shape`` (its chunk grid too: one that lists
        its chunks gets one more where the array grows past them)."""
        chain = self.bound_codecs.chain
        # a shard the grid adds must hold whole inner chunks (the sharding codec's rule)
        unit = getattr(chain.ab, "chunk_shape", None) if chain.ab.name == "sharding_indexed" and not chain.aa else None
        grid = self.chunk_grid.resized(shape, unit)
        if grid is self.chunk_grid:
            return self.evolve(shape=tuple(shape))
        return self.evolve(shape=tuple(shape), chunk_grid=grid)

    # ------------------------------------------------------------------ JSON
    @classmethod
    def from_json(cls, doc: Any) -> ArrayMetadata:
        if not isinstance(doc, dict):
            raise MetadataError("array metadata must be a JSON object")
        _check_format(doc, "array")
        for k in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"):
            if k not in doc:
                raise MetadataError(f"array metadata is missing the mandatory member {k!r}")
        extra = _split_unknown(doc, _ARRAY_KEYS, "array")
        shape = parse_int_list(doc["shape"], "shape", minimum=0)
        dt = DataType.parse(doc["data_type"])
        st = doc.get("storage_transformers", [])
        if not isinstance(st, list):
            raise MetadataError("'storage_transformers' must be an array")
        # those marked must_understand=false may be ignored by definition; no other is supported
        kept_st = [t for t in st if parse_extension(t, "storage transformer").must_understand]
        codecs_json = doc["codecs"]
        if not isinstance(codecs_json, list):
            raise MetadataError("'codecs' must be an array")
        # null reads as absent, as zarr-python reads it (zarrita.js writes it); it is written absent
        dn = doc.get("dimension_names")
        return cls(
            shape=shape,
            data_type=dt,
            chunk_grid=parse_chunk_grid(doc["chunk_grid"]),
            chunk_key_encoding=parse_chunk_key_encoding(doc["chunk_key_encoding"]),
            fill_value=dt.parse_fill_value(doc["fill_value"]),
            codecs=parse_codecs(codecs_json),
            attributes=_parse_attributes(doc),
            dimension_names=dn,
            storage_transformers=tuple(kept_st),
            extra=extra,
        )

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": self.chunk_grid.to_json(),
            "chunk_key_encoding": self.chunk_key_encoding.to_json(),
            "fill_value": self.data_type.fill_value_to_json(self.fill_value),
            "codecs": [c.to_json() for c in self.codecs],
            "attributes": self.attributes,
        }
        if self.dimension_names is not None:
            d["dimension_names"] = list(self.dimension_names)
        d["storage_transformers"] = list(self.storage_transformers)
        d.update(self.extra)
        return d

    def to_bytes(self) -> bytes:
        return _dumps(self.to_json())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayMetadata) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class GroupMetadata:
    attributes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    zarr_format = 3
    node_type = "group"

    def __post_init__(self) -> None:
        if not isinstance(self.attributes, dict):
            raise MetadataError("'attributes' must be an object")

    @classmethod
    def from_json(cls, doc: Any) -> GroupMetadata:
        if not isinstance(doc, dict):
            raise MetadataError("group metadata must be a JSON object")
        _check_format(doc, "group")
        extra = _split_unknown(doc, _GROUP_KEYS, "group")
        return cls(attributes=_parse_attributes(doc), extra=extra)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"zarr_format": 3, "node_type": "group", "attributes": self.attributes}
        d.update(self.extra)
        return d

    def to_bytes(self) -> bytes:
        return _dumps(self.to_json())

    def evolve(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GroupMetadata) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity literals; they are not JSON, but zarr-python writes
    # them inside attributes, so they are accepted there (and only produce floats).
    return float(name)


def parse_node_metadata(raw: bytes | bytearray | memoryview | str) -> ArrayMetadata | GroupMetadata:
    """Parse a ``zarr.json`` document (bytes) into array or group metadata."""
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")
        doc = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise MetadataError(f"zarr.json is not valid JSON: {e}") from None
    return parse_node_document(doc)


def parse_node_document(doc: Any, *, copy_attributes: bool = False) -> ArrayMetadata | GroupMetadata:
    """Array or group metadata from a ``zarr.json`` document already parsed from JSON (the checks
    of :func:`parse_node_metadata` after its JSON step).  ``copy_attributes``: the metadata gets
    a deep copy of the document's attributes (it never shares them with the caller's document)."""
    if not isinstance(doc, dict):
        raise MetadataError(f"zarr.json must hold a JSON object, got {type(doc).__name__}")
    zf = doc.get("zarr_format")
    if "zarr_format" not in doc:
        raise MetadataError("zarr.json has no 'zarr_format'")
    if isinstance(zf, bool) or zf != 3:
        raise MetadataError(f"unsupported zarr_format {zf!r} (zarrbolt reads Zarr v3)")
    if copy_attributes and doc.get("attributes"):
        import copy

        doc = {**doc, "attributes": copy.deepcopy(doc["attributes"])}
    nt = doc.get("node_type")
    if nt == "array":
        return ArrayMetadata.from_json(doc)
    if nt == "group":
        return GroupMetadata.from_json(doc)
    raise MetadataError(f"node_type must be 'array' or 'group', got {nt!r}")
