"""The API reference is generated from docstrings: every public function, class, method, property
and exception of zarrbolt has one, and the entry points users call (``zarrbolt.__all__``'s
functions, the methods of :class:`zarrbolt.Array` and :class:`zarrbolt.Group`, ``zarrbolt.config``
and ``zarrbolt.dask``) document their parameters and results numpy-style (``Parameters`` naming
every parameter, ``Returns`` / ``Yields`` when they return something; the types come from the
annotations)."""

from __future__ import annotations

import importlib
import inspect
import re
import types
from collections.abc import Iterator
from typing import Any

import pytest

import zarrbolt
import zarrbolt.config
import zarrbolt.dask
import zarrbolt.errors
import zarrbolt.storage
from zarrbolt.codecs import registry

# the classes whose public members are documented (beside zarrbolt.__all__'s)
EXTRA_CLASSES = ["zarrbolt.storage.ObjectStore", "zarrbolt.storage.FsspecStore", "zarrbolt.storage.NativeFiles",
                 "zarrbolt.storage.RangeByteRequest", "zarrbolt.storage.OffsetByteRequest",
                 "zarrbolt.storage.SuffixByteRequest", "zarrbolt.array_config.ArrayConfig"]
SPECIAL = {"__getitem__", "__setitem__", "__iter__", "__contains__", "__len__", "__array__"}
# the callables whose parameters and results are documented numpy-style
SECTIONED_MODULES = [zarrbolt.config, zarrbolt.dask]
SECTIONED_CLASSES = [zarrbolt.Array, zarrbolt.Group]


def _resolve(dotted: str) -> Any:
    mod, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(mod), name)


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """The public members ``cls`` defines itself (methods, class/static methods, properties)."""
    for name, obj in vars(cls).items():
        if name.startswith("_") and name not in SPECIAL:
            continue
        if isinstance(obj, classmethod):
            obj = getattr(cls, name)  # bound: inspect.getdoc finds a base class's documentation
        elif isinstance(obj, staticmethod):
            obj = obj.__func__
        if isinstance(obj, property) or inspect.isfunction(obj) or inspect.ismethod(obj):
            yield name, obj


def _module_functions(mod: types.ModuleType) -> Iterator[tuple[str, Any]]:
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for name in names:
        obj = getattr(mod, name)
        if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
            yield f"{mod.__name__}.{name}", obj


def _classes() -> dict[str, type]:
    out: dict[str, type] = {}
    for name in zarrbolt.__all__:
        obj = getattr(zarrbolt, name)
        if inspect.isclass(obj):
            out[f"zarrbolt.{name}"] = obj
    for dotted in EXTRA_CLASSES:
        out[dotted] = _resolve(dotted)
    for name in zarrbolt.storage.__all__:
        obj = getattr(zarrbolt.storage, name)
        if inspect.isclass(obj):
            out.setdefault(f"zarrbolt.storage.{name}", obj)
    registry._ensure_builtins()
    for cls in set(registry._REGISTRY.values()):
        out.setdefault(f"{cls.__module__}.{cls.__qualname__}", cls)
    return out


def _documented() -> dict[str, Any]:
    """Every object whose docstring the reference shows, by dotted name."""
    out: dict[str, Any] = {}
    for name in zarrbolt.__all__:
        obj = getattr(zarrbolt, name)
        if inspect.isfunction(obj):
            out[f"zarrbolt.{name}"] = obj
    for mod in (zarrbolt.config, zarrbolt.dask, zarrbolt.storage):
        out.update(_module_functions(mod))
    for name, obj in vars(zarrbolt.errors).items():
        if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == "zarrbolt.errors":
            out[f"zarrbolt.errors.{name}"] = obj
    for cname, cls in _classes().items():
        out[cname] = cls
        for m, obj in _members(cls):
            out[f"{cname}.{m}"] = obj
    return out


DOCUMENTED = _documented()


def _doc(obj: Any) -> str | None:
    if isinstance(obj, property):
        return obj.__doc__ or (obj.fget.__doc__ if obj.fget is not None else None)
    # a method overriding a documented method of a base class shares its documentation
    return inspect.getdoc(obj)


def test_the_walk_finds_the_api():
    names = set(DOCUMENTED)
    for want in ["zarrbolt.open_array", "zarrbolt.Array.get_orthogonal_selection", "zarrbolt.Array.shape",
                 "zarrbolt.Group.create_array", "zarrbolt.config.set", "zarrbolt.dask.to_dask",
                 "zarrbolt.errors.ChunkNotFoundError", "zarrbolt.storage.FsspecStore.from_url",
                 "zarrbolt.LocalStore.list_prefix", "zarrbolt.codecs.sharding.ShardingCodec"]:
        assert want in names, want
    assert len(names) > 300, len(names)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_has_a_docstring(name):
    doc = _doc(DOCUMENTED[name])
    assert doc and doc.strip(), f"{name} has no docstring"


def _sections(doc: str) -> dict[str, str]:
    """numpy-style sections: title -> body (the text up to the next underlined title)."""
    out: dict[str, str] = {}
    parts = re.split(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", doc, flags=re.M)
    for title, body in zip(parts[1::2], parts[2::2]):
        out[title.strip()] = body
    return out


def _sectioned() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in zarrbolt.__all__:
        obj = getattr(zarrbolt, name)
        if inspect.isfunction(obj):
            out[f"zarrbolt.{name}"] = obj
    for mod in SECTIONED_MODULES:
        out.update(_module_functions(mod))
    for cls in SECTIONED_CLASSES:
        for m, obj in _members(cls):
            if inspect.isfunction(obj) or inspect.ismethod(obj):
                out[f"zarrbolt.{cls.__name__}.{m}"] = obj
    return out


SECTIONED = _sectioned()


def _params(fn: Any) -> list[str]:
    sig = inspect.signature(fn)
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        out.append(prefix + p.name)
    return out


def _returns_something(fn: Any) -> bool:
    ann = inspect.signature(fn).return_annotation
    return ann not in ("None", None, inspect.Signature.empty)


@pytest.mark.parametrize("name", sorted(SECTIONED))
def test_parameters_and_returns_are_documented(name):
    fn = SECTIONED[name]
    _check_sections(name, inspect.getdoc(fn) or "", _params(fn), _returns_something(fn))


# classes users construct: the class docstring documents the constructor's parameters
CONSTRUCTED = ["zarrbolt.Array", "zarrbolt.Group", "zarrbolt.ArrayConfig", "zarrbolt.LocalStore",
               "zarrbolt.MemoryStore", "zarrbolt.storage.ObjectStore", "zarrbolt.storage.FsspecStore"]


@pytest.mark.parametrize("name", CONSTRUCTED)
def test_constructor_parameters_are_documented(name):
    cls = _resolve(name)
    params = [p for p in _params(cls.__init__) if not p.lstrip("*").startswith("_")]
    _check_sections(name, inspect.getdoc(cls) or "", params, False)


def _check_sections(name: str, doc: str, params: list[str], returns: bool) -> None:
    sections = _sections(doc)
    if params:
        assert "Parameters" in sections, f"{name}: no Parameters section"
        body = sections["Parameters"]
        listed = set()
        for line in body.split("\n"):
            m = re.match(r"^(\S[^:]*?)\s*(?::.*)?$", line)  # an entry: "name : type" (not indented)
            if m and not line.startswith(" "):
                listed.update(n.strip() for n in m.group(1).split(","))
        missing = [p for p in params if p not in listed]
        assert not missing, f"{name}: parameters not documented: {missing}"
        extra = sorted(listed - set(params))
        assert not extra, f"{name}: documents parameters it does not take: {extra}"
    if returns:
        assert "Returns" in sections or "Yields" in sections, f"{name}: no Returns section"


def test_sections_parse():
    doc = "Summary.\n\nParameters\n----------\na : int\n    The a.\nb, c\n    Two.\n\nReturns\n-------\nint\n"
    s = _sections(doc)
    assert set(s) == {"Parameters", "Returns"} and "a : int" in s["Parameters"]


def test_codec_pipeline_is_documented():
    """zarrbolt's codec pipeline for zarr-python (read from its source: importing it needs
    zarr-python): the class and its public methods and properties."""
    import ast
    from pathlib import Path

    path = Path(zarrbolt.__file__).parent / "zarr_python" / "pipeline.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    undocumented, seen = [], 0
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            seen += 1
            if not ast.get_docstring(node):
                undocumented.append(node.name)
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith("_"):
                    seen += 1
                    if not ast.get_docstring(m):
                        undocumented.append(f"{node.name}.{m.name}")
    assert seen > 10 and not undocumented, undocumented
