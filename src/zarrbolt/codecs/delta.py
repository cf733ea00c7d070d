"""``numcodecs.delta`` (array -> array): numcodecs' Delta filter, as zarr-python 3 writes it
(``zarr.codecs.numcodecs.Delta``).

JSON: ``{"name": "numcodecs.delta", "configuration": {"dtype": "<u2", "astype": "<i4"}}`` with
numpy type strings (``"uint16"``, ``"<u2"``, ``"u2"`` alike); ``dtype`` is required, ``astype``
(the stored type) defaults to ``dtype``; numcodecs' ``"id": "delta"`` may be present.  Encoding
writes the first element of the chunk, flattened in C order, then the difference of each element
and the one before it, computed in ``dtype`` and cast to ``astype``; decoding is the running sum.
The arithmetic is numpy's (zarrbolt/delta.h); what zarrbolt refuses:

* ``dtype`` must be the array's data type at this point of the chain (numcodecs would reinterpret
  the bytes of another type of the same size; zarr-python then casts back by value);
* integer and float16/32/64 types only, native or little-endian (numcodecs also accepts bool,
  complex, timedeltas and big-endian types, which no Zarr v3 data type maps to cleanly);
* a float difference (or, decoding, a running sum) that does not fit an integer ``astype``
  (numcodecs stores an unspecified integer) raises CodecError.

The C kernels (csrc/delta.c, ``zarrbolt._ext._delta``) run every (dtype, astype) pair; the codec
owns its fused-plan array-kernel stage (``c_stage``)."""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np

from ..errors import MetadataError
from .abc import ArrayToArrayCodec, ChunkSpec
from ._numcodecs import check_numcodecs_id, numpy_dtype_param
from .registry import register_codec
from ._util import config_dict

NAME = "numcodecs.delta"
_KINDS = "iuf"


def _ext() -> Any:
    from .._ext import _delta

    return _delta


def _np_dtype(value: Any, what: str) -> np.dtype:
    dt: np.dtype = numpy_dtype_param(NAME, value, what, _KINDS, "only integer and float16/32/64 types are supported")
    return dt


@register_codec
class DeltaCodec(ArrayToArrayCodec):
    """``dtype``: the decoded type (numpy string, required); ``astype``: the encoded type (None:
    the same).  The strings are kept as given so that the JSON round-trips."""

    name = NAME

    def __init__(self, dtype: str, astype: str | None = None):
        self.dtype_json = dtype
        self.astype_json = astype
        self.dtype = _np_dtype(dtype, "dtype")
        self.astype = self.dtype if astype is None else _np_dtype(astype, "astype")

    @classmethod
    def from_json(cls, configuration: Any) -> DeltaCodec:
        conf = config_dict(configuration, NAME, {"dtype", "astype", "id"})
        check_numcodecs_id(conf, NAME)
        if "dtype" not in conf:
            raise MetadataError(f"codec {NAME!r}: 'dtype' is required")
        astype = conf.get("astype")
        return cls(conf["dtype"], astype)

    def to_json(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"dtype": self.dtype_json}
        if self.astype_json is not None:
            conf["astype"] = self.astype_json
        return {"name": NAME, "configuration": conf}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ..metadata.dtypes import DataType

        if spec.dtype.numpy_dtype != self.dtype:
            raise MetadataError(
                f"codec {NAME!r}: dtype {self.dtype_json!r} is not the data type the codec receives ({spec.dtype.name})"
            )
        # The stored array's fill value: numpy's cast, as zarr-python makes it (a chunk of fill
        # values does not delta-encode to fill values; this one only fills missing inner chunks
        # when the codec sits before sharding_indexed).
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fill = np.asarray(spec.fill_value, dtype=self.dtype).astype(self.astype)[()]
        return ChunkSpec(spec.shape, DataType.from_numpy(self.astype), fill)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes // self.dtype.itemsize * self.astype.itemsize

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return self.encoded_size(decoded_nbytes)

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return cast(np.ndarray, _ext().encode(np.ascontiguousarray(array, dtype=self.dtype), self.astype))

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return cast(np.ndarray, _ext().decode(np.ascontiguousarray(array, dtype=self.astype), self.dtype))

    # -- codec-owned fused-plan stage (contract section A)
    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> Any:
        """An ``ArrayKernelStage`` (order-dependent kernel over the chunk in stored order), or None
        while the plan side of the interface is not there."""
        try:
            from .abc import ArrayKernelStage  # type: ignore[attr-defined]
        except ImportError:
            try:
                from .stages import ArrayKernelStage
            except ImportError:
                return None
        ext = _ext()
        return ArrayKernelStage(ext.DECODE_STEP, ext.ENCODE_STEP, ext.params(self.dtype, self.astype),
                                spec_in.dtype, spec_out.dtype)
