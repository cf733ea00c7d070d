"""OME-Zarr high-content screening (HCS) plates: a plate group lists its rows, columns, wells
and acquisitions; each well (``<row>/<column>``) lists its fields of view; each field is an
OME-Zarr multiscale image.  NGFF 0.4 (Zarr v2, metadata in the attributes) and 0.5 (Zarr v3,
under ``"ome"``) are read; plates are written as sharded NGFF 0.5.

    >>> plate = ome.open_plate("screen.ome.zarr")            # doctest: +SKIP
    >>> plate.rows, plate.columns, list(plate)                 # doctest: +SKIP
    >>> plate["B/3"][0].levels[0]                              # doctest: +SKIP

Every problem in the metadata raises :class:`zarrbolt.errors.OmeMetadataError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NodeNotFoundError, OmeMetadataError
from .metadata import ome_attributes
from .reader import Image, image_from_group

__all__ = ["Acquisition", "FieldRef", "Plate", "PlateLayout", "Well", "WellPosition", "open_plate", "open_well",
           "parse_plate", "parse_well"]

_ACQ_INT_KEYS = ("maximumfieldcount", "starttime", "endtime")
_ACQ_STR_KEYS = ("name", "description")


def _fail(what: str) -> OmeMetadataError:
    return OmeMetadataError(f"OME-Zarr plate metadata: {what}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class Acquisition:
    """One acquisition (a run of the microscope over the plate): ``id`` (unique, >= 0) and the
    optional name, description, maximum field count and start/end times (epoch integers)."""

    id: int
    name: str | None = None
    maximumfieldcount: int | None = None
    description: str | None = None
    starttime: int | None = None
    endtime: int | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id}
        for k in ("name", "maximumfieldcount", "description", "starttime", "endtime"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d


@dataclass(frozen=True)
class WellPosition:
    """Where a well sits: its path (``"B/3"``), row and column names and their indices in the
    plate's ``rows`` and ``columns``."""

    path: str
    row: str
    column: str
    row_index: int
    column_index: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "rowIndex": self.row_index, "columnIndex": self.column_index}


@dataclass(frozen=True)
class PlateLayout:
    """The ``plate`` object: rows, columns, wells, acquisitions, field count, name, version."""

    version: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    wells: tuple[WellPosition, ...]
    acquisitions: tuple[Acquisition, ...] = ()
    field_count: int | None = None
    name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FieldRef:
    """One field of view of a well: the image's path in the well and its acquisition id (None
    when the metadata gives none)."""

    path: str
    acquisition: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path} if self.acquisition is None else {"path": self.path, "acquisition": self.acquisition}


def _names(v: Any, what: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not v:
        raise _fail(f"'{what}' must be a non-empty list of {{'name': ...}} objects, got {v!r}")
    out = []
    for i, item in enumerate(v):
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name or "/" in name:
            raise _fail(f"{what}[{i}] must be an object with a non-empty 'name' without '/', got {item!r}")
        out.append(name)
    if len(set(out)) != len(out):
        raise _fail(f"'{what}' names must be unique, got {out}")
    return tuple(out)


def _well_position(w: Any, i: int, rows: tuple[str, ...], columns: tuple[str, ...]) -> WellPosition:
    path = w.get("path") if isinstance(w, Mapping) else None
    if not isinstance(path, str) or path.count("/") != 1:
        raise _fail(f"wells[{i}] must be an object with a 'path' of the form '<row>/<column>', got {w!r}")
    row, col = path.split("/")
    if row not in rows or col not in columns:
        raise _fail(f"wells[{i}] path {path!r}: row {row!r} or column {col!r} is not in the plate's rows "
                    f"{list(rows)} / columns {list(columns)}")
    ri, ci = rows.index(row), columns.index(col)
    for key, want in (("rowIndex", ri), ("columnIndex", ci)):
        got = w.get(key)
        if got is not None and (not _is_int(got) or got != want):
            raise _fail(f"wells[{i}] ({path}): {key} {got!r} does not match the position of its name ({want})")
    return WellPosition(path, row, col, ri, ci)


def _acquisition(a: Any, i: int) -> Acquisition:
    if not isinstance(a, Mapping) or not _is_int(a.get("id")) or a["id"] < 0:
        raise _fail(f"acquisitions[{i}] must be an object with a non-negative integer 'id', got {a!r}")
    kw: dict[str, Any] = {}
    for k in _ACQ_INT_KEYS:
        if a.get(k) is not None:
            if not _is_int(a[k]):
                raise _fail(f"acquisitions[{i}].{k} must be an integer, got {a[k]!r}")
            kw[k] = a[k]
    for k in _ACQ_STR_KEYS:
        if a.get(k) is not None:
            if not isinstance(a[k], str):
                raise _fail(f"acquisitions[{i}].{k} must be a string, got {a[k]!r}")
            kw[k] = a[k]
    return Acquisition(a["id"], **kw)


def parse_plate(attrs: Mapping[str, Any]) -> PlateLayout:
    """The plate of a group's attributes (NGFF 0.4: ``attrs["plate"]``; 0.5: under ``"ome"``)."""
    version, ome = ome_attributes(attrs)
    plate = ome.get("plate")
    if not isinstance(plate, Mapping):
        raise _fail(f"no 'plate' object in the group's attributes (got {type(plate).__name__}): not a plate")
    if version == "0.4" and plate.get("version") is not None:
        if plate["version"] not in ("0.1", "0.2", "0.3", "0.4"):
            raise _fail(f"unsupported plate version {plate['version']!r} (this reader knows 0.4 and 0.5)")
        version = plate["version"]
    rows, columns = _names(plate.get("rows"), "rows"), _names(plate.get("columns"), "columns")
    wells_json = plate.get("wells")
    if not isinstance(wells_json, list):
        raise _fail(f"'wells' must be a list, got {wells_json!r}")
    wells = tuple(_well_position(w, i, rows, columns) for i, w in enumerate(wells_json))
    if len({w.path for w in wells}) != len(wells):
        raise _fail(f"well paths must be unique, got {[w.path for w in wells]}")
    acq_json = plate.get("acquisitions") or []
    if not isinstance(acq_json, list):
        raise _fail(f"'acquisitions' must be a list, got {acq_json!r}")
    acquisitions = tuple(_acquisition(a, i) for i, a in enumerate(acq_json))
    if len({a.id for a in acquisitions}) != len(acquisitions):
        raise _fail(f"acquisition ids must be unique, got {[a.id for a in acquisitions]}")
    fc = plate.get("field_count")
    if fc is not None and (not _is_int(fc) or fc < 1):
        raise _fail(f"'field_count' must be a positive integer, got {fc!r}")
    name = plate.get("name")
    if name is not None and not isinstance(name, str):
        raise _fail(f"'name' must be a string, got {name!r}")
    known = {"rows", "columns", "wells", "acquisitions", "field_count", "name", "version"}
    return PlateLayout(version, rows, columns, wells, acquisitions, fc, name,
                       {k: v for k, v in plate.items() if k not in known})


def parse_well(attrs: Mapping[str, Any]) -> tuple[str, tuple[FieldRef, ...]]:
    """(version, the fields) of a well group's attributes."""
    version, ome = ome_attributes(attrs)
    well = ome.get("well")
    if not isinstance(well, Mapping):
        raise OmeMetadataError(f"OME-Zarr well metadata: no 'well' object (got {type(well).__name__}): not a well")
    images = well.get("images")
    if not isinstance(images, list):
        raise OmeMetadataError(f"OME-Zarr well metadata: 'images' must be a list, got {images!r}")
    fields = []
    for i, im in enumerate(images):
        path = im.get("path") if isinstance(im, Mapping) else None
        if not isinstance(path, str) or not path or path in (".", ".."):
            raise OmeMetadataError(f"OME-Zarr well metadata: images[{i}] must have a non-empty 'path', got {im!r}")
        acq = im.get("acquisition")
        if acq is not None and not _is_int(acq):
            raise OmeMetadataError(f"OME-Zarr well metadata: images[{i}].acquisition must be an integer, got {acq!r}")
        fields.append(FieldRef(path, acq))
    if len({f.path for f in fields}) != len(fields):
        raise OmeMetadataError(f"OME-Zarr well metadata: image paths must be unique, got {[f.path for f in fields]}")
    if version == "0.4" and isinstance(well.get("version"), str):
        version = well["version"]
    return version, tuple(fields)


def _child(group: Any, path: str, what: str) -> Any:
    try:
        node = group[path]
    except (KeyError, NodeNotFoundError):
        raise OmeMetadataError(f"{what} {path!r} is listed in {group.name} but is not in the store") from None
    if hasattr(node, "shape"):
        raise OmeMetadataError(f"{what} {path!r} in {group.name} is an array, not a group")
    return node


class Well(Sequence[Image]):
    """A well: its fields of view, each an OME-Zarr :class:`Image` opened when asked for
    (``well[0]``, ``well["0"]``, iteration)."""

    def __init__(self, group: Any):
        if hasattr(group, "shape"):
            raise OmeMetadataError(f"{group.name} is an array; an OME-Zarr well is a group")
        self.group = group
        self.version, self.fields = parse_well(group.attrs.asdict())
        self._images: dict[str, Image] = {}

    @property
    def field_paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.fields)

    @property
    def acquisitions(self) -> dict[int | None, tuple[str, ...]]:
        """Acquisition id → the paths of its fields (None: fields without one)."""
        out: dict[int | None, list[str]] = {}
        for f in self.fields:
            out.setdefault(f.acquisition, []).append(f.path)
        return {k: tuple(v) for k, v in out.items()}

    def image(self, key: int | str) -> Image:
        """The field ``key`` (its index in ``fields`` or its path)."""
        if isinstance(key, str):
            if key not in self.field_paths:
                raise KeyError(key)
            path = key
        else:
            path = self.fields[key].path
        if path not in self._images:
            self._images[path] = image_from_group(_child(self.group, path, "field"))
        return self._images[path]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return [self.image(i) for i in range(len(self.fields))[key]]
        return self.image(key)

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[Image]:
        return (self.image(i) for i in range(len(self.fields)))

    def __repr__(self) -> str:
        return f"<OME-Zarr well {self.group.name} NGFF {self.version} fields={list(self.field_paths)}>"


class Plate(Mapping[str, Well]):
    """An OME-Zarr plate: its layout (``rows``, ``columns``, ``wells``, ``acquisitions``,
    ``field_count``, ``name``) and its wells, opened when asked for: ``plate["B/3"]``,
    ``plate["B", "3"]`` or ``plate.well("B", "3")``; iteration gives the well paths."""

    def __init__(self, group: Any):
        if hasattr(group, "shape"):
            raise OmeMetadataError(f"{group.name} is an array; an OME-Zarr plate is a group")
        self.group = group
        self.layout = parse_plate(group.attrs.asdict())
        self._by_path = {w.path: w for w in self.layout.wells}
        self._wells: dict[str, Well] = {}

    @property
    def version(self) -> str:
        """The NGFF version read (``"0.4"``, ``"0.5"``; older plates give their own)."""
        return self.layout.version

    @property
    def name(self) -> str | None:
        return self.layout.name

    @property
    def rows(self) -> tuple[str, ...]:
        return self.layout.rows

    @property
    def columns(self) -> tuple[str, ...]:
        return self.layout.columns

    @property
    def acquisitions(self) -> tuple[Acquisition, ...]:
        return self.layout.acquisitions

    @property
    def field_count(self) -> int | None:
        """The metadata's ``field_count`` (the most fields in a well), None when not given."""
        return self.layout.field_count

    @property
    def wells(self) -> tuple[WellPosition, ...]:
        return self.layout.wells

    def position(self, path: str) -> WellPosition:
        return self._by_path[path]

    def grid(self) -> list[list[str | None]]:
        """``grid[row_index][column_index]``: the path of the well there, or None."""
        out: list[list[str | None]] = [[None] * len(self.columns) for _ in self.rows]
        for w in self.layout.wells:
            out[w.row_index][w.column_index] = w.path
        return out

    def well(self, row: str, column: str) -> Well:
        return self[f"{row}/{column}"]

    def __getitem__(self, key: Any) -> Well:
        path = "/".join(key) if isinstance(key, tuple) else key
        if path not in self._by_path:
            raise KeyError(key)
        if path not in self._wells:
            self._wells[path] = Well(_child(self.group, path, "well"))
        return self._wells[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_path)

    def __len__(self) -> int:
        return len(self._by_path)

    def images(self) -> Iterator[tuple[str, str, Image]]:
        """Every field of every well: ``(well path, field path, image)``."""
        for path in self:
            well = self[path]
            for f in well.fields:
                yield path, f.path, well.image(f.path)

    def __repr__(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return (f"<OME-Zarr plate{name} {self.group.name} NGFF {self.version} {len(self.rows)} rows x "
                f"{len(self.columns)} columns, {len(self)} wells>")


def _open(store: Any, path: str | None, mode: str, storage_options: Any) -> Any:
    from ..api.opening import open_group

    if hasattr(store, "attrs") and hasattr(store, "members") and path is None:
        return store
    return open_group(store, mode=mode, path=path, storage_options=storage_options)


def open_plate(store: Any, *, path: str | None = None, mode: str = "r", storage_options: Any = None) -> Plate:
    """Open the OME-Zarr plate (NGFF 0.4 or 0.5) at ``store``: a local path, any URL zarrbolt
    opens, a store (with ``path``) or an opened zarrbolt group."""
    return Plate(_open(store, path, mode, storage_options))


def open_well(store: Any, *, path: str | None = None, mode: str = "r", storage_options: Any = None) -> Well:
    """Open one OME-Zarr well group (NGFF 0.4 or 0.5), as :func:`open_plate` opens a plate."""
    return Well(_open(store, path, mode, storage_options))


# ---------------------------------------------------------------------------------------- writing
def _check_name(name: Any, what: str) -> str:
    name = str(name) if _is_int(name) else name
    if not isinstance(name, str) or not name or not (name.isascii() and name.isalnum()):
        raise _fail(f"{what} name {name!r} must be a non-empty string of letters and digits")
    return name


def _well_key(key: Any) -> tuple[str, str]:
    parts = tuple(key) if isinstance(key, tuple) else str(key).split("/") if isinstance(key, str) else None
    if parts is None or len(parts) != 2:
        raise _fail(f"a well is named '<row>/<column>' or (row, column), got {key!r}")
    return _check_name(parts[0], "row"), _check_name(parts[1], "column")


def _layout_names(given: Any, used: Sequence[str], what: str) -> tuple[str, ...]:
    if given is None:
        digits = all(u.isdigit() for u in used)
        return tuple(sorted(set(used), key=lambda u: (int(u) if digits else len(u), u)))
    names = tuple(_check_name(n, what) for n in given)
    if len(set(names)) != len(names):
        raise _fail(f"{what} names must be unique, got {list(names)}")
    missing = sorted(set(used) - set(names))
    if missing:
        raise _fail(f"wells use {what}s {missing} that are not in {what}s={list(names)}")
    return names


def _field_specs(well: str, value: Any) -> list[tuple[str, Any, int | None, dict[str, Any]]]:
    """(path, data, acquisition, image options) of each field given for one well."""
    items = [value] if hasattr(value, "shape") or isinstance(value, Mapping) else list(value)
    if not items:
        raise _fail(f"well {well!r} has no fields")
    out = []
    for i, f in enumerate(items):
        opts = dict(f) if isinstance(f, Mapping) else {"data": f}
        if "data" not in opts:
            raise _fail(f"well {well!r} field {i}: a field is an array or a mapping with 'data', got keys {sorted(opts)}")
        data, acq, path = opts.pop("data"), opts.pop("acquisition", None), opts.pop("path", str(i))
        if acq is not None and (not _is_int(acq) or acq < 0):
            raise _fail(f"well {well!r} field {i}: acquisition must be a non-negative integer, got {acq!r}")
        out.append((_check_name(path, "field path"), data, acq, opts))
    if len({p for p, *_ in out}) != len(out):
        raise _fail(f"well {well!r}: field paths must be unique, got {[p for p, *_ in out]}")
    return out


def _acquisitions(given: Any, used: set[int]) -> tuple[Acquisition, ...]:
    if given is None:
        return tuple(Acquisition(i) for i in sorted(used))
    acqs = tuple(a if isinstance(a, Acquisition) else _acquisition(a, i) for i, a in enumerate(given))
    ids = [a.id for a in acqs]
    if len(set(ids)) != len(ids):
        raise _fail(f"acquisition ids must be unique, got {ids}")
    unknown = sorted(used - set(ids))
    if unknown:
        raise _fail(f"fields name acquisitions {unknown} that are not in acquisitions (ids {ids})")
    return acqs


def write_plate(
    store: Any,
    wells: Mapping[Any, Any],
    *,
    path: str | None = None,
    rows: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    name: str | None = None,
    acquisitions: Sequence[Any] | None = None,
    field_count: int | None = None,
    overwrite: bool = False,
    storage_options: Any = None,
    **image_options: Any,
) -> Plate:
    """Write an OME-Zarr NGFF 0.5 plate (Zarr v3, every field a sharded multiscale image).

    ``wells`` maps a well (``"B/3"`` or ``("B", "3")``) to its fields: a list whose items are
    arrays (anything :func:`~zarrbolt.ome.write_image` takes) or mappings ``{"data": array,
    "acquisition": id, "path": "0", ...}`` whose other keys override ``image_options`` for that
    field (``omero``, ``name``, ...); a single array is one field.  Field paths default to
    ``"0"``, ``"1"``, ...  ``rows``/``columns``: the plate's names in order (default: those the
    wells use, sorted; columns of digits numerically).  ``acquisitions``: dicts or
    :class:`Acquisition` (default: one per acquisition id the fields name); with more than one,
    every field must name its acquisition.  ``image_options``: :func:`~zarrbolt.ome.write_image`'s
    (``axes``, ``units``, ``scale``, ``chunks``, ``shards``, ``levels``, ``method``, ...).

    Everything is checked before anything is written; the wells' and the plate's metadata are
    written after their images, so an interrupted write leaves no plate that reads as complete."""
    from ..api.opening import create_group, open_group
    from .writer import check_image_options, write_image

    if not isinstance(wells, Mapping) or not wells:
        raise _fail("wells must be a non-empty mapping of '<row>/<column>' to fields")
    specs = {_well_key(k): _field_specs(str(k), v) for k, v in wells.items()}
    if len(specs) != len(wells):
        raise _fail(f"two keys of wells name the same well: {list(wells)}")
    row_names = _layout_names(rows, [r for r, _ in specs], "row")
    col_names = _layout_names(columns, [c for _, c in specs], "column")
    used = {acq for fields in specs.values() for _, _, acq, _ in fields if acq is not None}
    acqs = _acquisitions(acquisitions, used)
    if len(acqs) > 1 and any(acq is None for fields in specs.values() for _, _, acq, _ in fields):
        raise _fail(f"the plate has {len(acqs)} acquisitions: every field must name its acquisition")
    most = max(len(f) for f in specs.values())
    if field_count is not None and (not _is_int(field_count) or field_count < most):
        raise _fail(f"field_count must be an integer >= the most fields in a well ({most}), got {field_count!r}")
    if name is not None and not isinstance(name, str):
        raise _fail(f"name must be a string, got {name!r}")
    for fields in specs.values():
        for _, data, _, opts in fields:
            check_image_options(data, {**image_options, **opts})

    root = create_group(store, path=path, overwrite=overwrite, storage_options=storage_options)
    order = sorted(specs, key=lambda rc: (row_names.index(rc[0]), col_names.index(rc[1])))
    for row, col in order:
        well_path = _join(root.path, f"{row}/{col}")
        for fpath, data, _, opts in specs[row, col]:
            write_image(root.store, data, path=_join(well_path, fpath), overwrite=overwrite, **{**image_options, **opts})
        images = [FieldRef(fpath, acq).to_json() for fpath, _, acq, _ in specs[row, col]]
        open_group(root.store, path=well_path, mode="r+").update_attributes(
            {"ome": {"version": "0.5", "well": {"images": images}}})
    plate: dict[str, Any] = {
        "version": "0.5",  # in the plate object too, as ome-zarr-py writes it and ome-zarr-models expects
        "rows": [{"name": r} for r in row_names],
        "columns": [{"name": c} for c in col_names],
        "wells": [WellPosition(f"{r}/{c}", r, c, row_names.index(r), col_names.index(c)).to_json() for r, c in order],
        "field_count": most if field_count is None else field_count,
    }
    if acqs:
        plate["acquisitions"] = [a.to_json() for a in acqs]
    if name is not None:
        plate["name"] = name
    root.update_attributes({"ome": {"version": "0.5", "plate": plate}})
    return Plate(open_group(root.store, path=root.path or None, mode="r"))


def _join(parent: str, child: str) -> str:
    return f"{parent}/{child}" if parent else child


# ---------------------------------------------------------------------------------------- summary
def _image_summary(img: Image, where: str) -> dict[str, Any]:
    lv = img.levels[0]
    return {"path": where, "axes": "".join(img.axis_names) if all(len(a) == 1 for a in img.axis_names)
            else list(img.axis_names), "shape": list(lv.shape), "dtype": str(lv.dtype), "levels": len(img),
            "chunks": list(lv.chunks), "shards": list(lv.shards) if getattr(lv, "shards", None) else None}


def _well_counts(plate: Plate) -> tuple[dict[str, int | None], dict[str, Any] | None, list[str]]:
    counts: dict[str, int | None] = {}
    first: dict[str, Any] | None = None
    problems = []
    for path in plate:
        try:
            well = plate[path]
            counts[path] = len(well)
            if first is None and len(well):
                first = _image_summary(well.image(0), f"{path}/{well.fields[0].path}")
        except (OmeMetadataError, NodeNotFoundError) as e:
            counts[path] = None
            problems.append(f"{path}: {e}")
    return counts, first, problems


def plate_summary(group: Any) -> dict[str, Any] | None:
    """What ``zarrbolt info`` says of an OME-Zarr plate or well group (None for other groups):
    the layout (rows, columns, wells and their field counts), the acquisitions and the first
    field's image.  Broken metadata is reported in ``"error"``/``"problems"``, never raised."""
    try:
        _, ome = ome_attributes(group.attrs.asdict())
    except OmeMetadataError:
        return None
    if "plate" not in ome and "well" not in ome:
        return None
    try:
        if "well" in ome and "plate" not in ome:
            well = Well(group)
            first = _image_summary(well.image(0), well.fields[0].path) if len(well) else None
            return {"kind": "well", "version": well.version, "fields": [f.to_json() for f in well.fields],
                    "image": first}
        plate = Plate(group)
    except (OmeMetadataError, NodeNotFoundError) as e:
        return {"kind": "plate" if "plate" in ome else "well", "error": str(e)}
    counts, first, problems = _well_counts(plate)
    grid = [[counts.get(p) if p is not None else None for p in row] for row in plate.grid()]
    known = [n for n in counts.values() if n is not None]
    return {"kind": "plate", "version": plate.version, "name": plate.name, "rows": list(plate.rows),
            "columns": list(plate.columns), "wells": len(plate), "field_count": plate.field_count,
            "fields_per_well": [min(known), max(known)] if known else None,
            "acquisitions": [a.to_json() for a in plate.acquisitions], "image": first,
            "layout": grid, "problems": problems}


def _layout_lines(s: dict[str, Any]) -> list[str]:
    w = max(max(len(c) for c in s["columns"]), 1)
    rw = max(len(r) for r in s["rows"])
    lines = [" " * rw + " " + " ".join(f"{c:>{w}}" for c in s["columns"])]
    for r, cells in zip(s["rows"], s["layout"]):
        lines.append(f"{r:<{rw}} " + " ".join(f"{'.' if n is None else n:>{w}}" for n in cells))
    return lines


def plate_summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """:func:`plate_summary` as ``zarrbolt info``'s (label, text) rows."""
    if "error" in s:
        return [(f"OME-Zarr {s['kind']}", f"unreadable metadata: {s['error']}")]
    rows: list[tuple[str, str]] = []
    if s["kind"] == "well":
        fields = ", ".join(f["path"] + (f" (acquisition {f['acquisition']})" if "acquisition" in f else "")
                           for f in s["fields"])
        rows.append(("OME-Zarr well", f"NGFF {s['version']}, {len(s['fields'])} fields: {fields}"))
    else:
        name = f"{s['name']!r}, " if s["name"] else ""
        fpw = s["fields_per_well"]
        per = "" if fpw is None else f", {fpw[0]} field{'s' if fpw[0] != 1 else ''} per well" if fpw[0] == fpw[1] \
            else f", {fpw[0]}-{fpw[1]} fields per well"
        rows.append(("OME-Zarr plate", f"{name}NGFF {s['version']}, {len(s['rows'])} rows x {len(s['columns'])} "
                                       f"columns, {s['wells']} wells{per}"))
        if s["acquisitions"]:
            rows.append(("Acquisitions", "; ".join(
                f"{a['id']}" + (f" {a['name']!r}" if "name" in a else "") for a in s["acquisitions"])))
        lines = _layout_lines(s)
        rows.append(("Layout", lines[0]))
        rows += [("", line) for line in lines[1:]]
        rows += [("Problem", p) for p in s["problems"]]
    img = s["image"]
    if img is not None:
        axes = img["axes"] if isinstance(img["axes"], str) else ",".join(img["axes"])
        layout = f", shards {tuple(img['shards'])}" if img["shards"] else ""
        rows.append(("Field image", f"{img['path']}: axes {axes}, {tuple(img['shape'])} {img['dtype']}, "
                                    f"{img['levels']} levels, chunks {tuple(img['chunks'])}{layout}"))
    return rows
