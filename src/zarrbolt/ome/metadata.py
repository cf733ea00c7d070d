"""OME-Zarr (NGFF) metadata: axes, multiscales and labels, parsed from NGFF 0.4 (Zarr v2, the
attributes themselves) and 0.5 (Zarr v3, under the ``"ome"`` key), and written as 0.5.

Every problem found here raises :class:`zarrbolt.errors.OmeMetadataError` naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import OmeMetadataError

__all__ = ["SPACE_UNITS", "TIME_UNITS", "Axis", "Multiscale", "ome_attributes", "parse_axes", "parse_multiscale"]

#: The units NGFF allows for ``space`` axes (UDUNITS-2 names).
SPACE_UNITS = frozenset(
    ["angstrom", "attometer", "centimeter", "decimeter", "exameter", "femtometer", "foot", "gigameter", "hectometer", "inch", "kilometer", "megameter", "meter", "micrometer", "mile", "millimeter", "nanometer", "parsec", "petameter", "picometer", "terameter", "yard", "yoctometer", "yottameter", "zeptometer", "zettameter"]
)
#: The units NGFF allows for ``time`` axes.
TIME_UNITS = frozenset(
    ["attosecond", "centisecond", "day", "decisecond", "exasecond", "femtosecond", "gigasecond", "hectosecond", "hour", "kilosecond", "megasecond", "microsecond", "millisecond", "minute", "nanosecond", "petasecond", "picosecond", "second", "terasecond", "yoctosecond", "yottasecond", "zeptosecond", "zettasecond"]
)
_DEFAULT_TYPES = {"t": "time", "c": "channel", "z": "space", "y": "space", "x": "space"}
VERSIONS = ("0.4", "0.5")


@dataclass(frozen=True)
class Axis:
    """One axis of an image: its name, type (``"space"``, ``"time"``, ``"channel"`` or a custom
    type; None when the metadata gives none) and unit (None when not given)."""

    name: str
    type: str | None = None
    unit: str | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.type is not None:
            d["type"] = self.type
        if self.unit is not None:
            d["unit"] = self.unit
        return d


@dataclass(frozen=True)
class Multiscale:
    """One entry of ``multiscales``: axes and, per level (largest first), the array path and its
    scale and translation (one number per axis; translation zeros when absent)."""

    version: str
    axes: tuple[Axis, ...]
    paths: tuple[str, ...]
    scales: tuple[tuple[float, ...], ...]
    translations: tuple[tuple[float, ...], ...]
    name: str | None = None
    type: str | None = None
    metadata: Any = None
    coordinate_transformations: tuple[dict[str, Any], ...] = ()


def _fail(what: str) -> OmeMetadataError:
    return OmeMetadataError(f"OME-Zarr metadata: {what}")


def _axis_from_json(ax: Any, i: int) -> Axis:
    if isinstance(ax, str):  # NGFF 0.3: axes as names
        return Axis(ax, _DEFAULT_TYPES.get(ax))
    if not isinstance(ax, Mapping) or not isinstance(ax.get("name"), str) or not ax["name"]:
        raise _fail(f"axes[{i}] must be an object with a non-empty string 'name', got {ax!r}")
    typ, unit = ax.get("type"), ax.get("unit")
    if typ is not None and not isinstance(typ, str):
        raise _fail(f"axes[{i}].type must be a string, got {typ!r}")
    if unit is not None and not isinstance(unit, str):
        raise _fail(f"axes[{i}].unit must be a string, got {unit!r}")
    return Axis(ax["name"], typ, unit)


def check_axes(axes: Sequence[Axis], *, strict_units: bool) -> None:
    """The NGFF rules on axes: 2 to 5 of them, unique names, 2 or 3 ``space`` axes, at most one
    ``time`` and one ``channel`` axis, time first, then channel/custom, then space; units known
    for space and time axes (checked when ``strict_units``, as for writing)."""
    names = [a.name for a in axes]
    if not 2 <= len(axes) <= 5:
        raise _fail(f"an image has 2 to 5 axes, not {len(axes)} ({names})")
    if len(set(names)) != len(names):
        raise _fail(f"axis names must be unique, got {names}")
    types = [a.type or _DEFAULT_TYPES.get(a.name) for a in axes]
    nspace = types.count("space")
    if nspace not in (2, 3):
        raise _fail(f"an image has 2 or 3 'space' axes, got {nspace} ({names})")
    if types.count("time") > 1 or types.count("channel") > 1:
        raise _fail(f"at most one 'time' and one 'channel' axis, got types {types}")
    if "time" in types and types.index("time") != 0:
        raise _fail(f"the 'time' axis must come first, got {names}")
    first_space = types.index("space")
    if any(t != "space" for t in types[first_space:]):
        raise _fail(f"the 'space' axes must come last, got {names} with types {types}")
    for a in axes:
        if not strict_units or a.unit is None:
            continue
        allowed = SPACE_UNITS if a.type == "space" else TIME_UNITS if a.type == "time" else None
        if allowed is not None and a.unit not in allowed:
            raise _fail(f"unit {a.unit!r} of {a.type} axis {a.name!r} is not one NGFF allows "
                        f"(e.g. {', '.join(sorted(allowed)[:6])}, ...)")


def parse_axes(spec: Any, ndim: int, units: Any = None) -> tuple[Axis, ...]:
    """Axes for writing: ``spec`` a string of one-letter names (``"tczyx"``), a list of names, of
    dicts or of :class:`Axis`, or None for the default of ``ndim`` axes (``yx``, ``zyx``,
    ``czyx``, ``tczyx``).  ``units``: one unit for every space axis, or a mapping name → unit."""
    if spec is None:
        if not 2 <= ndim <= 5:
            raise _fail(f"an image has 2 to 5 axes; give axes= for a {ndim}-d array")
        spec = "tczyx"[5 - ndim:]
    items = list(spec)
    axes = []
    for i, item in enumerate(items):
        if isinstance(item, Axis):
            ax = item
        elif isinstance(item, str):
            ax = Axis(item, _DEFAULT_TYPES.get(item))
        else:
            ax = _axis_from_json(item, i)
        if ax.type is None:
            raise _fail(f"axis {ax.name!r} needs a type (space, time, channel or a custom type)")
        axes.append(ax)
    if len(axes) != ndim:
        raise _fail(f"{len(axes)} axes ({[a.name for a in axes]}) for a {ndim}-d array")
    if units is not None:
        by_name = dict(units) if isinstance(units, Mapping) else {a.name: units for a in axes if a.type == "space"}
        unknown = set(by_name) - {a.name for a in axes}
        if unknown:
            raise _fail(f"units given for unknown axes {sorted(unknown)}")
        axes = [Axis(a.name, a.type, by_name.get(a.name, a.unit)) for a in axes]
    check_axes(axes, strict_units=True)
    return tuple(axes)


def _finite(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:  # an integer beyond float's range
        return False


def _vector(t: Mapping[str, Any], key: str, ndim: int, where: str) -> tuple[float, ...]:
    v = t.get(key)
    if "path" in t and v is None:
        raise _fail(f"{where}: {key} stored in a separate array (path) is not supported")
    if not (isinstance(v, list) and len(v) == ndim and all(_finite(x) for x in v)):
        raise _fail(f"{where}: '{key}' must be a list of {ndim} finite numbers, got {v!r}")
    return tuple(float(x) for x in v)


def _transforms(ts: Any, ndim: int, where: str, *, need_scale: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(scale, translation) of a coordinateTransformations list: a scale first, then at most one
    translation (NGFF 0.4/0.5)."""
    if ts is None and not need_scale:
        return (1.0,) * ndim, (0.0,) * ndim
    if not isinstance(ts, list) or not ts or not all(isinstance(t, Mapping) for t in ts):
        raise _fail(f"{where}: coordinateTransformations must be a non-empty list of objects, got {ts!r}")
    if ts[0].get("type") != "scale":
        raise _fail(f"{where}: the first coordinate transformation must be a 'scale', got {ts[0].get('type')!r}")
    scale = _vector(ts[0], "scale", ndim, where)
    translation = (0.0,) * ndim
    if len(ts) > 2 or (len(ts) == 2 and ts[1].get("type") != "translation"):
        raise _fail(f"{where}: after the scale only one 'translation' may follow, got {[t.get('type') for t in ts]}")
    if len(ts) == 2:
        translation = _vector(ts[1], "translation", ndim, where)
    return scale, translation


def parse_multiscale(ms: Any, version: str, index: int = 0) -> Multiscale:
    """One ``multiscales`` entry (0.4 or 0.5)."""
    where = f"multiscales[{index}]"
    if not isinstance(ms, Mapping):
        raise _fail(f"{where} must be an object, got {type(ms).__name__}")
    raw_axes = ms.get("axes")
    if not isinstance(raw_axes, list):
        raise _fail(f"{where}.axes must be a list, got {raw_axes!r}")
    axes = tuple(_axis_from_json(a, i) for i, a in enumerate(raw_axes))
    check_axes(axes, strict_units=False)
    ds = ms.get("datasets")
    if not isinstance(ds, list) or not ds:
        raise _fail(f"{where}.datasets must be a non-empty list, got {ds!r}")
    paths, scales, translations = [], [], []
    for i, d in enumerate(ds):
        if not isinstance(d, Mapping) or not isinstance(d.get("path"), str) or not d["path"]:
            raise _fail(f"{where}.datasets[{i}] must be an object with a non-empty string 'path', got {d!r}")
        s, t = _transforms(d.get("coordinateTransformations"), len(axes), f"{where}.datasets[{i}]", need_scale=True)
        paths.append(d["path"])
        scales.append(s)
        translations.append(t)
    top = ms.get("coordinateTransformations")
    if top is not None:
        _transforms(top, len(axes), f"{where}.coordinateTransformations", need_scale=True)
    name = ms.get("name")
    return Multiscale(
        version=version, axes=axes, paths=tuple(paths), scales=tuple(scales), translations=tuple(translations),
        name=name if isinstance(name, str) else None, type=ms.get("type") if isinstance(ms.get("type"), str) else None,
        metadata=ms.get("metadata"), coordinate_transformations=tuple(top or ()),
    )


def ome_attributes(attrs: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """(version, the NGFF attributes) of a group's attributes: the ``"ome"`` object of 0.5, or
    the attributes themselves for 0.4 (version from ``multiscales[0].version`` or
    ``image-label.version``, "0.4" when absent)."""
    ome = attrs.get("ome")
    if ome is not None:
        if not isinstance(ome, Mapping):
            raise _fail(f"'ome' must be an object, got {type(ome).__name__}")
        version = ome.get("version")
        if version is None and set(ome) == {"labels"}:
            return "0.5", ome  # a labels group as ome-zarr-py 0.21 writes it, without "version"
        if version is None:
            raise _fail("'ome' has no 'version'")
        if not isinstance(version, str) or not version.startswith("0.5"):
            raise _fail(f"unsupported NGFF version {version!r} under 'ome' (this reader knows 0.5)")
        return "0.5", ome
    version = "0.4"
    ms = attrs.get("multiscales")
    if isinstance(ms, list) and ms and isinstance(ms[0], Mapping) and isinstance(ms[0].get("version"), str):
        version = ms[0]["version"]
    if version not in ("0.3", "0.4"):
        raise _fail(f"unsupported NGFF version {version!r} (this reader knows 0.4 and 0.5)")
    return "0.4", attrs


def multiscales_of(attrs: Mapping[str, Any]) -> tuple[str, list[Multiscale], Mapping[str, Any]]:
    """(version, every multiscale, the NGFF attributes) of an image group's attributes."""
    version, ome = ome_attributes(attrs)
    ms = ome.get("multiscales")
    if not isinstance(ms, list) or not ms:
        raise _fail("no 'multiscales' (a non-empty list) in the group's attributes: not an OME-Zarr image")
    return version, [parse_multiscale(m, version, i) for i, m in enumerate(ms)], ome


def multiscale_json(axes: Sequence[Axis], paths: Sequence[str], scales: Sequence[Sequence[float]],
                    translations: Sequence[Sequence[float]], *, name: str | None, method: str) -> dict[str, Any]:
    """A 0.5 ``multiscales`` entry (no version: 0.5 keeps it in ``ome.version``)."""
    datasets = []
    for p, s, t in zip(paths, scales, translations):
        ts: list[dict[str, Any]] = [{"type": "scale", "scale": [float(x) for x in s]}]
        if any(x != 0 for x in t):
            ts.append({"type": "translation", "translation": [float(x) for x in t]})
        datasets.append({"path": p, "coordinateTransformations": ts})
    ms: dict[str, Any] = {"axes": [a.to_json() for a in axes], "datasets": datasets, "type": method,
                          "metadata": {"method": f"zarrbolt.ome.downsample ({method}, factor 2)"}}
    if name is not None:
        ms["name"] = name
    return ms
