"""The API reference (docs/reference/*.md, rendered by mkdocstrings from ``::: dotted.path``
blocks) covers the public API: every name of ``zarrbolt.__all__``, every exception class of
``zarrbolt.errors``, and each of the modules the reference promises (config, storage, codecs,
dask, codec pipeline, kernels).  Each ``:::`` target must exist (an unknown one fails the site
build as well, but this test needs no mkdocs)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path

import pytest

import zarrbolt
import zarrbolt.errors

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"
_BLOCK = re.compile(r"^::: *(?P<path>[\w.]+)[ \t]*\n(?P<options>(?:[ \t]+.*\n|[ \t]*\n(?=[ \t]+\S))*)", re.MULTILINE)


def _blocks() -> list[tuple[str, str, str]]:
    """(page, dotted path, options text) of every ``:::`` block of the reference."""
    out = []
    for page in sorted(REFERENCE.glob("*.md")):
        text = page.read_text(encoding="utf-8") + "\n"
        out += [(page.name, m["path"], m["options"]) for m in _BLOCK.finditer(text)]
    return out


BLOCKS = _blocks()


_DOORS = ("zarrbolt.codec_pipeline", "zarrbolt.zarr_python")
HAVE_ZARR = importlib.util.find_spec("zarr") is not None


def _resolve(dotted: str) -> object:
    """The object a ``:::`` path names: the longest importable module prefix, then attributes.
    Without zarr-python (the main virtualenv), zarrbolt.codec_pipeline and zarrbolt.zarr_python
    cannot be imported: their paths are checked in the installed sources instead (the module's
    file, the class statement)."""
    if not HAVE_ZARR and any(dotted == d or dotted.startswith(d + ".") for d in _DOORS):
        return _static_pipeline_object(dotted)
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def _static_pipeline_object(dotted: str) -> str:
    if dotted == "zarrbolt.codec_pipeline":
        assert (Path(zarrbolt.__file__).parent / "codec_pipeline.py").is_file()
        return dotted
    base = Path(zarrbolt.__file__).parent / "zarr_python"
    parts = dotted.split(".")[2:]
    if not parts:
        assert (base / "__init__.py").is_file()
        return dotted
    src = (base / f"{parts[0]}.py").read_text(encoding="utf-8")
    for name in parts[1:]:
        if not re.search(rf"^(\s*(class|def) {name}\b|{name}\s*[:=])", src, re.MULTILINE):
            raise AttributeError(f"{dotted}: no {name} in zarr_python/{parts[0]}.py")
    return dotted


def _documented() -> list[object]:
    return [_resolve(path) for _, path, _ in BLOCKS]


def _whole_module_members(module: object) -> set[str]:
    """Names a ``::: module`` block renders: its public members, unless the block lists
    ``members:`` itself (then only those, or none with ``members: false``)."""
    names: set[str] = set()
    for _, path, options in BLOCKS:
        if _resolve(path) is not module:
            continue
        m = re.search(r"^\s*members:\s*(.*)$", options, re.MULTILINE)
        if m is None:
            names |= {n for n in vars(module) if not n.startswith("_")}
        elif m[1].strip() not in ("false", ""):
            names |= set(re.findall(r"\w+", m[1]))
    return names


def test_every_reference_block_resolves():
    assert len(BLOCKS) > 40
    for page, path, _ in BLOCKS:
        try:
            _resolve(path)
        except (AttributeError, ModuleNotFoundError) as e:
            pytest.fail(f"{page}: ::: {path} does not exist ({e})")


@pytest.mark.parametrize("name", zarrbolt.__all__)
def test_every_public_name_is_in_the_reference(name):
    obj = getattr(zarrbolt, name)
    documented = _documented()
    if inspect.ismodule(obj):  # config, errors: the module itself
        assert any(d is obj for d in documented), f"zarrbolt.{name}: no ::: block renders the module"
        return
    if isinstance(obj, str):  # __version__
        assert any(path == f"zarrbolt.{name}" for _, path, _ in BLOCKS)
        return
    home = sys.modules.get(getattr(obj, "__module__", ""))
    in_module_page = home is not None and obj.__name__ in _whole_module_members(home)
    assert in_module_page or any(d is obj for d in documented), f"zarrbolt.{name} has no ::: block in docs/reference"


def _exceptions() -> list[str]:
    return sorted(n for n, c in vars(zarrbolt.errors).items()
                  if inspect.isclass(c) and issubclass(c, BaseException) and c.__module__ == "zarrbolt.errors")


@pytest.mark.parametrize("name", _exceptions())
def test_every_exception_is_in_the_reference(name):
    cls = getattr(zarrbolt.errors, name)
    assert not name.startswith("_"), f"{name}: a private exception class is raised to users undocumented"
    assert name in zarrbolt.errors.__all__, f"zarrbolt.errors.{name} is not in the module's __all__"
    rendered = any(d is cls for d in _documented()) or name in _whole_module_members(zarrbolt.errors)
    assert rendered, f"zarrbolt.errors.{name} is not rendered by docs/reference"


@pytest.mark.parametrize("module", ["zarrbolt.config", "zarrbolt.dask", "zarrbolt.kernels", "zarrbolt.codecs",
                                    "zarrbolt.storage"])
def test_every_public_member_of_the_modules_is_in_the_reference(module):
    mod = importlib.import_module(module)
    documented = _documented()
    rendered = _whole_module_members(mod)
    for name in getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]:
        obj = getattr(mod, name)
        if inspect.ismodule(obj) or name.isupper():  # constants are listed in the module docstring
            continue
        ok = name in rendered or any(d is obj for d in documented)
        assert ok, f"{module}.{name} has no ::: block in docs/reference"


def test_the_codec_pipeline_page_documents_the_class():
    # zarrbolt.codec_pipeline imports zarr-python, absent here: check the block by its path
    paths = {path for _, path, _ in BLOCKS}
    assert "zarrbolt.zarr_python.pipeline.ZarrboltCodecPipeline" in paths
    assert "zarrbolt.codec_pipeline" in paths
