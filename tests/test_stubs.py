"""Typing of the compiled modules: ``py.typed`` ships with the package and every extension
module (``zarrbolt/_ext/*.pyx``) has a ``.pyi`` stub beside it whose public names are exactly the
module's public names (classes with their public methods and properties), whose functions take
the parameters the compiled functions take, and which declares every name zarrbolt's own Python
code uses from the compiled modules.  Runs against the source tree and the installed wheel."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest

import zarrbolt

PKG_DIR = Path(zarrbolt.__file__).parent
EXT_DIR = PKG_DIR / "_ext"

# this interpreter's builds only (an in-place tree may hold builds for several Python versions)
MODULES = sorted({p.name.split(".")[0] for p in EXT_DIR.iterdir()
                  if any(p.name.endswith(sfx) for sfx in importlib.machinery.EXTENSION_SUFFIXES)})


def _stub(name: str) -> ast.Module:
    path = EXT_DIR / f"{name}.pyi"
    assert path.is_file(), f"no stub {path.name} for the compiled module zarrbolt._ext.{name}"
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _stub_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            out.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return out


def _public_runtime(mod: types.ModuleType) -> dict[str, object]:
    """Names the module defines itself (not imports: modules, or objects of another module)."""
    out = {}
    for name, obj in vars(mod).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        owner = getattr(obj, "__module__", None)
        if owner is not None and owner != mod.__name__ and (callable(obj) or isinstance(obj, type)):
            continue
        out[name] = obj
    return out


def _stub_type_alias(node: ast.stmt) -> bool:
    """``_U64 = np.ndarray[...]``: a private alias of the stub itself, not a runtime name."""
    return isinstance(node, ast.Assign)


def test_py_typed_ships():
    assert (PKG_DIR / "py.typed").is_file()


def test_every_compiled_module_is_found():
    sources = sorted(p.stem for p in EXT_DIR.glob("*.pyx"))
    if sources:  # the source tree (the wheel ships no .pyx)
        assert MODULES == sources
    assert {"_kernels", "_plans", "_zstd", "_deflate", "_shard"} <= set(MODULES), MODULES
    assert sorted(p.stem for p in EXT_DIR.glob("*.pyi")) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_stub_names_match_module(name):
    mod = importlib.import_module(f"zarrbolt._ext.{name}")
    stub = _stub_names(_stub(name).body)
    runtime = _public_runtime(mod)
    stub_public = {k for k, v in stub.items() if not k.startswith("_")}
    assert sorted(set(runtime) - stub_public) == [], f"{name}: public names missing from {name}.pyi"
    assert sorted(stub_public - set(runtime)) == [], f"{name}.pyi declares names {name} does not have"
    # private names a stub declares (testing aids) exist too; private aliases are the stub's own
    ghosts = [k for k, v in stub.items() if k.startswith("_") and not _stub_type_alias(v) and not hasattr(mod, k)]
    assert ghosts == [], f"{name}.pyi declares private names {name} does not have"


def _params(fn: ast.FunctionDef, method: bool) -> list[tuple[str, str, bool]]:
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    if method:
        pos = pos[1:]
    ndef = len(a.defaults)
    out = [(p.arg, "POSITIONAL_OR_KEYWORD", i >= len(pos) - ndef) for i, p in enumerate(pos)]
    out += [(p.arg, "KEYWORD_ONLY", d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out


def _runtime_params(obj) -> list[tuple[str, str, bool]] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind.name, p.default is not inspect.Parameter.empty) for p in sig.parameters.values()
            if p.name != "self"]


def _check_function(where: str, fn: ast.FunctionDef, obj, method: bool) -> list[str]:
    want = _runtime_params(obj)
    if want is None:
        return []
    got = _params(fn, method)
    return [] if got == want else [f"{where}: stub {got} != compiled {want}"]


@pytest.mark.parametrize("name", MODULES)
def test_stub_signatures_match(name):
    mod = importlib.import_module(f"zarrbolt._ext.{name}")
    problems, checked = [], 0
    for key, node in _stub_names(_stub(name).body).items():
        obj = getattr(mod, key, None)
        if isinstance(node, ast.FunctionDef) and obj is not None:
            problems += _check_function(f"{name}.{key}", node, obj, False)
            checked += 1
        elif isinstance(node, ast.ClassDef) and isinstance(obj, type):
            members = _stub_names(node.body)
            public = {k for k in vars(obj) if not k.startswith("_")}
            declared = {k for k in members if not k.startswith("_")}
            if public != declared:
                problems.append(f"{name}.{key}: compiled members {sorted(public)} != stub {sorted(declared)}")
            for m, mnode in members.items():
                attr = vars(obj).get(m)
                if isinstance(mnode, ast.FunctionDef) and callable(attr) and not m.startswith("__"):
                    problems += _check_function(f"{name}.{key}.{m}", mnode, attr, True)
                    checked += 1
    assert problems == []
    assert checked > 0


def _uses_of_compiled_modules() -> dict[str, set[str]]:
    """Names zarrbolt's Python code takes from each compiled module: ``from .._ext._m import X``
    and ``_m.X`` after ``from .._ext import _m``."""
    uses: dict[str, set[str]] = {m: set() for m in MODULES}
    for path in PKG_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module.split(".")
                if mod[-1] == "_ext":
                    aliases.update({a.asname or a.name: a.name for a in node.names if a.name in uses})
                elif len(mod) >= 2 and mod[-2] == "_ext" and mod[-1] in uses:
                    uses[mod[-1]].update(a.name for a in node.names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                uses[aliases[node.value.id]].add(node.attr)
    return uses


def test_stubs_declare_what_zarrbolt_uses():
    uses = _uses_of_compiled_modules()
    assert sum(len(v) for v in uses.values()) > 30  # the scan found the package's real uses
    missing = {m: sorted(names - set(_stub_names(_stub(m).body))) for m, names in uses.items()}
    assert {m: v for m, v in missing.items() if v} == {}


def test_mypy_stubtest_agrees(tmp_path):
    """mypy's own runtime-vs-stub checker: names, signatures (including each parameter's kind and
    default), properties, and class layout of every compiled module."""
    pytest.importorskip("mypy.stubtest")
    allow = Path(__file__).with_name("stubtest_allowlist.txt")
    mods = [f"zarrbolt._ext.{m}" for m in MODULES]
    cfg = tmp_path / "mypy.ini"  # not the project's configuration: the stubs alone
    cfg.write_text("[mypy]\n")
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--allowlist", str(allow),
                          "--ignore-unused-allowlist", "--mypy-config-file", str(cfg), *mods],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert f"no issues found in {len(mods)} modules" in out.stdout
