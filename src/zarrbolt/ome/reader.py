"""Reading OME-Zarr images: :func:`open_image` and :class:`Image`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import NodeNotFoundError, OmeMetadataError
from .metadata import Axis, Multiscale, multiscales_of, ome_attributes

__all__ = ["Image", "Labels", "open_image"]


class Image:
    """An OME-Zarr multiscale image: its levels (zarrbolt arrays, largest first), axes and, per
    level, scale and translation.  ``labels`` maps label names to their images; ``omero`` and
    ``image_label`` are the metadata's objects of those names (None when absent)."""

    def __init__(self, group: Any, multiscale: Multiscale, ome: Mapping[str, Any], *, all_multiscales: tuple[Any, ...] = ()):
        self.group = group
        self._ms = multiscale
        self._ome = ome
        self.multiscales = all_multiscales or (multiscale,)
        levels = []
        for i, p in enumerate(multiscale.paths):
            try:
                arr = group[p]
            except (KeyError, NodeNotFoundError):
                raise OmeMetadataError(f"OME-Zarr image {group.name}: dataset {i} path {p!r} is not an array "
                                       f"in the group") from None
            if not hasattr(arr, "shape") or not hasattr(arr, "dtype"):
                raise OmeMetadataError(f"OME-Zarr image {group.name}: dataset {p!r} is a group, not an array")
            if len(arr.shape) != len(multiscale.axes):
                raise OmeMetadataError(f"OME-Zarr image {group.name}: dataset {p!r} has {len(arr.shape)} "
                                       f"dimensions but the image has {len(multiscale.axes)} axes")
            levels.append(arr)
        self.levels: tuple[Any, ...] = tuple(levels)

    # ------------------------------------------------------------------ the metadata
    @property
    def version(self) -> str:
        """The NGFF version read: ``"0.4"`` (Zarr v2 attributes) or ``"0.5"`` (``"ome"`` key)."""
        return self._ms.version

    @property
    def name(self) -> str | None:
        return self._ms.name

    @property
    def axes(self) -> tuple[Axis, ...]:
        return self._ms.axes

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self._ms.axes)

    @property
    def axis_types(self) -> tuple[str | None, ...]:
        return tuple(a.type for a in self._ms.axes)

    @property
    def units(self) -> tuple[str | None, ...]:
        return tuple(a.unit for a in self._ms.axes)

    @property
    def paths(self) -> tuple[str, ...]:
        return self._ms.paths

    @property
    def scales(self) -> tuple[tuple[float, ...], ...]:
        """Per level, the scale of each axis (physical size of one pixel)."""
        return self._ms.scales

    @property
    def translations(self) -> tuple[tuple[float, ...], ...]:
        """Per level, the translation of each axis (zeros when the metadata has none)."""
        return self._ms.translations

    @property
    def coordinate_transformations(self) -> tuple[dict[str, Any], ...]:
        """The multiscale's own coordinateTransformations (applied after each level's)."""
        return self._ms.coordinate_transformations

    @property
    def method(self) -> str | None:
        """The downsampling method the metadata names (``multiscales[].type``), if any."""
        return self._ms.type

    @property
    def omero(self) -> Any:
        return self._ome.get("omero")

    @property
    def image_label(self) -> Any:
        return self._ome.get("image-label")

    @property
    def labels(self) -> Labels:
        """The label images of this image (empty when it has no ``labels`` group)."""
        return Labels(self.group)

    # ------------------------------------------------------------------ sequence of levels
    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, level: int) -> Any:
        return self.levels[level]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.levels)

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(a.shape) for a in self.levels)

    @property
    def dtype(self) -> Any:
        return self.levels[0].dtype

    def __repr__(self) -> str:
        return (f"<OME-Zarr image {self.group.name} NGFF {self.version} axes={''.join(self.axis_names)} "
                f"levels={list(self.shapes)} dtype={self.dtype}>")


class Labels(Mapping[str, Any]):
    """The ``labels`` group of an image: name → label :class:`Image`, opened when asked for."""

    def __init__(self, image_group: Any, *, labels_group: Any = None):
        self._names: tuple[str, ...] = ()
        self._group = None
        if labels_group is not None:
            g = labels_group
        else:
            try:
                g = image_group["labels"]
            except (KeyError, NodeNotFoundError):
                return
        if not hasattr(g, "attrs") or hasattr(g, "shape"):
            return
        _, ome = ome_attributes(g.attrs.asdict())
        names = ome.get("labels", [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise OmeMetadataError(f"OME-Zarr labels group {g.name}: 'labels' must be a list of names, got {names!r}")
        self._group, self._names = g, tuple(names)

    @classmethod
    def of_group(cls, labels_group: Any) -> Labels:
        """The label images a ``labels`` group lists (the group opened on its own)."""
        return cls(None, labels_group=labels_group)

    def __getitem__(self, name: str) -> Image:
        if name not in self._names:
            raise KeyError(name)
        try:
            g = self._group[name]  # type: ignore[index]
        except (KeyError, NodeNotFoundError):
            raise OmeMetadataError(f"OME-Zarr labels: label {name!r} is listed but not in the group") from None
        return image_from_group(g)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<OME-Zarr labels {list(self._names)}>"


def image_from_group(group: Any, index: int = 0) -> Image:
    """The image of ``multiscales[index]`` in an opened zarrbolt group."""
    if hasattr(group, "shape"):
        raise OmeMetadataError(f"{group.name} is an array; an OME-Zarr image is a group")
    _, mss, ome = multiscales_of(group.attrs.asdict())
    if not 0 <= index < len(mss):
        raise OmeMetadataError(f"OME-Zarr image {group.name} has {len(mss)} multiscales; no index {index}")
    return Image(group, mss[index], ome, all_multiscales=tuple(mss))


def open_image(store: Any, *, path: str | None = None, multiscale: int = 0, mode: str = "r",
               storage_options: Any = None) -> Image:
    """Open the OME-Zarr image (NGFF 0.4 on Zarr v2 or 0.5 on Zarr v3) at ``store`` — a local
    path, any URL zarrbolt opens, a store or a zarrbolt group.  ``multiscale`` picks one entry
    of ``multiscales`` (the first by default)."""
    from ..api.opening import open_group

    if hasattr(store, "attrs") and hasattr(store, "members") and path is None:
        group = store
    else:
        group = open_group(store, mode=mode, path=path, storage_options=storage_options)
    return image_from_group(group, multiscale)
