"""``make crosscheck``: build zarrbolt's C for Windows and macOS with ``zig cc`` (PyPI ``ziglang``).

For each target (default: x86_64-windows-gnu, x86_64-macos, aarch64-macos):

1. every ``csrc/**/*.c`` is compiled with the flags of CMakeLists.txt plus ``-Werror`` (the
   variants CMake can select are compiled too: LZ4 from liblz4 or from c-blosc2, LZ4 partial
   block decoding on or off);
2. the plain-C kernels (``csrc/*.c``: pool, CPU dispatch, file I/O, pipelines) are linked into a
   shared library with every symbol resolved against the target's system libraries alone;
3. the kernels and the codec wrappers (``csrc/codecs/*.c``) are linked into a second shared
   library in which the only symbols allowed to stay unresolved are the zstd, libdeflate, LZ4,
   c-blosc and c-blosc2 functions the wrappers call (listed from a Linux build of the same
   objects): they resolve against link-time stand-ins defining exactly those functions (Windows:
   import libraries made by ``zig dlltool``; macOS: a stub dylib, zig's linker having no ``-U``),
   so any other missing symbol fails the link;
4. (on a Linux host) the C self-test ``tests/c/selftest.c`` is built by zig's clang and run, so
   the clang code paths (target attributes, intrinsics) execute, not only compile;
5. the extension modules' C (``cython`` output of ``src/zarrbolt/_ext/*.pyx``, with CMake's Cython
   options) is compiled with ``-c``.  No Windows or macOS CPython headers are available offline,
   so this uses this interpreter's own include directory (Linux ``pyconfig.h``) and numpy's: it
   checks the Cython output and zarrbolt's ``.pxd`` declarations against the target's C library
   and compiler, not CPython's platform configuration.

The third-party headers come from the host (``/usr/include``: zstd, libdeflate, lz4; copied alone
into the build directory, so no other host header leaks in) and from the venv's ``blosc`` and
``blosc2`` wheels, as for ``make wincheck``.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# CMake: CMAKE_C_STANDARD 11 with its default extensions on, i.e. -std=gnu11
WARN = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-unused-function"]
CFLAGS = ["-std=gnu11", "-O2", "-ffp-contract=off", "-fvisibility=hidden", *WARN]
# CMakeLists.txt: the same relaxations for Cython's generated C
CYTHON_CFLAGS = ["-std=gnu11", "-O2", *WARN, "-Wno-unused-variable", "-Wno-sign-compare",
                 "-Wno-missing-field-initializers", "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION"]
THIRD_PARTY = re.compile(r"^(ZSTD_|ZDICT_|libdeflate_|LZ4_|blosc_|blosc1_|blosc2_)")
HOST_HEADERS = ["zstd.h", "zstd_errors.h", "libdeflate.h", "lz4.h"]
# codec wrapper -> the compile variants CMake may select for it
VARIANTS = {
    "lz4_codec.c": [[], ["-DZB_LZ4_FROM_BLOSC2"]],
    "blosc2_codec.c": [["-DZB_HAVE_LZ4_PARTIAL"], []],
}


def run(cmd: list[str], what: str) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(f"crosscheck: {what} failed\n$ {shlex.join(cmd)}\n{out.stdout}{out.stderr}\n")
        raise SystemExit(1)


def wheel_include(dist: str, header: str, lib: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "cmake" / "wheel_lib.py"), dist, header, lib],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"crosscheck: the {dist} wheel (with {header}) is not installed in this venv")
    return out.stdout.split(";")[0]


def include_flags(build: Path) -> list[str]:
    inc = build / "include"
    inc.mkdir(parents=True, exist_ok=True)
    for h in HOST_HEADERS:
        src = Path("/usr/include") / h
        if not src.is_file():
            raise SystemExit(f"crosscheck: /usr/include/{h} missing (make sysdeps)")
        shutil.copy2(src, inc / h)
    return ["-I" + str(ROOT / "csrc" / "include"), "-I" + str(ROOT / "csrc"), "-I" + str(inc),
            "-I" + wheel_include("blosc2", "blosc2.h", "libblosc2.a"),
            "-I" + wheel_include("blosc", "blosc.h", "libblosc.a")]


def compile_c(zig: list[str], target: str, build: Path, incs: list[str]) -> tuple[list[Path], list[Path]]:
    """Compile every C source (and its variants); returns (kernel objects, codec objects), one
    object per source for linking (the first variant)."""
    core, codecs = [], []
    for src in sorted(glob.glob(str(ROOT / "csrc" / "**" / "*.c"), recursive=True)):
        name = Path(src).name
        for i, extra in enumerate(VARIANTS.get(name, [[]])):
            obj = build / target / "obj" / f"{Path(src).stem}.{i}.o"
            obj.parent.mkdir(parents=True, exist_ok=True)
            run([*zig, "cc", "-target", target, *CFLAGS, "-Werror", *incs, *extra, "-c", src, "-o", str(obj)],
                f"{target}: compile {Path(src).relative_to(ROOT)} {' '.join(extra)}")
            if i == 0:
                (codecs if "codecs" in Path(src).parts else core).append(obj)
    return core, codecs


def third_party_symbols(zig: list[str], build: Path, incs: list[str]) -> list[str]:
    """The third-party functions the codec wrappers call: undefined symbols of an ELF build."""
    core, codecs = compile_c(zig, "x86_64-linux-gnu", build, incs)
    out = subprocess.run(["nm", "-u", *map(str, core + codecs)], capture_output=True, text=True, check=True)
    names = sorted({line.split()[-1] for line in out.stdout.splitlines() if line.strip().startswith("U ")})
    syms = [n for n in names if THIRD_PARTY.match(n)]
    if len(syms) < 10:
        raise SystemExit(f"crosscheck: only {syms} look like zstd/libdeflate/lz4/blosc calls")
    return syms


def import_libs(zig: list[str], target: str, build: Path, syms: list[str]) -> list[str]:
    """Import libraries (one DLL per third-party library) defining the given functions."""
    groups = {"zstd": "ZSTD_|ZDICT_", "deflate": "libdeflate_", "lz4": "LZ4_", "blosc": "blosc1_|blosc_",
              "blosc2": "blosc2_"}
    libs = []
    for dll, pat in groups.items():
        names = [s for s in syms if re.match(f"^({pat})", s)]
        if not names:
            continue
        d = build / target / f"{dll}.def"
        d.write_text(f"LIBRARY {dll}.dll\nEXPORTS\n" + "".join(f"  {n}\n" for n in names))
        lib = build / target / f"lib{dll}.dll.a"
        run([*zig, "dlltool", "-m", "i386:x86-64", "-d", str(d), "-l", str(lib)], f"{target}: dlltool {dll}")
        libs.append(str(lib))
    return libs


def interface_dylib(zig: list[str], target: str, build: Path, syms: list[str]) -> list[str]:
    """macOS: a link-time stand-in for the third-party libraries (zig's Mach-O linker has no
    ``-U``): a dylib defining exactly the functions the wrappers call, so that any other
    unresolved symbol still fails the link (the role the import libraries play for Windows)."""
    src = build / target / "zb3p.c"
    src.write_text("".join(f"void {s}(void) {{}}\n" for s in syms))
    lib = build / target / "libzb3p.dylib"
    run([*zig, "cc", "-target", target, "-shared", str(src), "-o", str(lib)], f"{target}: interface dylib")
    return ["-L" + str(lib.parent), "-lzb3p"]


def link(zig: list[str], target: str, build: Path, core: list[Path], codecs: list[Path], syms: list[str]) -> None:
    windows = "windows" in target
    ext = "dll" if windows else "dylib"
    kernels = build / target / f"zbcore.{ext}"
    run([*zig, "cc", "-target", target, "-shared", *map(str, core), "-o", str(kernels)] +
        ([] if windows else ["-Wl,-undefined,error"]), f"{target}: link the C kernels")
    whole = build / target / f"zbcodecs.{ext}"
    if windows:
        extra = import_libs(zig, target, build, syms)
    else:
        extra = ["-Wl,-undefined,error", *interface_dylib(zig, target, build, syms)]
    run([*zig, "cc", "-target", target, "-shared", *map(str, core + codecs), *extra, "-o", str(whole)],
        f"{target}: link the kernels and codec wrappers")
    print(f"  {target}: linked {kernels.name} ({kernels.stat().st_size} B) and {whole.name} "
          f"({whole.stat().st_size} B; {len(syms)} zstd/libdeflate/lz4/blosc functions left to their libraries)")


def cythonize(build: Path) -> list[Path]:
    ext = ROOT / "src" / "zarrbolt" / "_ext"
    outs = []
    for pyx in sorted(ext.glob("*.pyx")):
        c = build / "cython" / f"{pyx.stem}.c"
        c.parent.mkdir(parents=True, exist_ok=True)
        if not c.exists() or c.stat().st_mtime < max(p.stat().st_mtime for p in ext.glob("*.p*")):
            run([sys.executable, "-m", "cython", "-3", "--fast-fail", "-X", "boundscheck=False", "-X",
                 "wraparound=False", "-X", "cdivision=True", "-X", "embedsignature=True", "-I", str(ext),
                 "--module-name", f"zarrbolt._ext.{pyx.stem}", str(pyx), "-o", str(c)], f"cython {pyx.name}")
        outs.append(c)
    return outs


def zig_libc_dirs(zig: list[str], target: str) -> list[Path]:
    """The target's C library and compiler header directories inside the zig installation."""
    out = subprocess.run([*zig, "env"], capture_output=True, text=True, check=True).stdout
    m = re.search(r'"?lib_dir"?\s*[:=]\s*"([^"]+)"', out)
    if not m:
        raise SystemExit(f"crosscheck: no lib_dir in `zig env`: {out[:200]}")
    lib = Path(m.group(1)).resolve()
    osdir = "any-windows-any" if "windows" in target else "any-darwin-any"
    dirs = [lib / "include", lib / "libc" / "include" / osdir]
    if "windows" not in target:
        arch = target.split("-")[0]
        dirs += [lib / "libc" / "include" / f"{arch}-macos-none", lib / "libc" / "include" / "any-macos-any"]
    return [d for d in dirs if d.is_dir()]


def python_headers_for(zig: list[str], target: str, build: Path) -> Path:
    """A copy of this interpreter's include directory whose pyconfig.h drops the HAVE_<header>_H
    of every header the target's C library lacks (and, for Windows, sets the LLP64 sizes), the
    way CPython's configure would have found them; the quoted #include "pyconfig.h" in Python.h
    finds this copy first."""
    host = Path(sysconfig.get_paths()["include"])
    dst = build / target / "python-include"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(host, dst)
    have = zig_libc_dirs(zig, target)
    lines = [f'/* {host}/pyconfig.h adjusted for {target} by tools/crosscheck.py */',
             f'#include "{host}/pyconfig.h"']
    dropped = []
    for m in re.finditer(r"^#define (HAVE_([A-Z0-9_]+)_H) 1", (host / "pyconfig.h").read_text(), re.M):
        parts = m.group(2).lower().split("_")
        candidates = {"/".join(parts) + ".h", "_".join(parts) + ".h"}
        candidates |= {"/".join(parts[:i]) + "/" + "_".join(parts[i:]) + ".h" for i in range(1, len(parts))}
        if not any((d / c).is_file() for d in have for c in candidates):
            lines.append(f"#undef {m.group(1)}")
            dropped.append(m.group(1))
    if "windows" in target:
        lines += ["#undef SIZEOF_LONG", "#define SIZEOF_LONG 4", "#undef SIZEOF_WCHAR_T", "#define SIZEOF_WCHAR_T 2"]
    (dst / "pyconfig.h").write_text("\n".join(lines) + "\n")
    return dst


def numpy_headers_for(zig: list[str], target: str, build: Path) -> Path:
    """A copy of numpy's include directory whose generated _numpyconfig.h (from this Linux build
    of numpy) drops the headers the target lacks and, for Windows, has its LLP64 sizes."""
    import numpy

    dst = build / target / "numpy-include"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(numpy.get_include(), dst)
    cfg = dst / "numpy" / "_numpyconfig.h"
    text = cfg.read_text()
    have = zig_libc_dirs(zig, target)
    for m in re.finditer(r"^#define (NPY_HAVE_([A-Z0-9_]+)_H) 1$", text, re.M):
        header = m.group(2).lower().replace("sys_", "sys/") + ".h"
        if not any((d / header).is_file() for d in have):
            text = text.replace(m.group(0), f"/* {m.group(0)[1:]}: not on {target} */")
    if "windows" in target:
        text = re.sub(r"#define NPY_SIZEOF_LONG 8", "#define NPY_SIZEOF_LONG 4", text)
        text = re.sub(r"#define NPY_SIZEOF_WCHAR_T 4", "#define NPY_SIZEOF_WCHAR_T 2", text)
    cfg.write_text(text)
    return dst


def compile_cython(zig: list[str], target: str, build: Path, incs: list[str], cfiles: list[Path]) -> None:
    py = ["-I" + str(python_headers_for(zig, target, build)), "-I" + str(numpy_headers_for(zig, target, build))]
    for c in cfiles:
        extra = ["-DNPY_TARGET_VERSION=NPY_2_0_API_VERSION"] if c.stem == "_vlen" else []
        obj = build / target / "cython" / f"{c.stem}.o"
        obj.parent.mkdir(parents=True, exist_ok=True)
        run([*zig, "cc", "-target", target, *CYTHON_CFLAGS, *extra, *incs, *py, "-c", str(c), "-o", str(obj)],
            f"{target}: compile the Cython output {c.name}")
    print(f"  {target}: compiled the C of {len(cfiles)} extension modules (host CPython and numpy headers, their "
          "configuration headers adjusted to the target)")


def native_selftest(zig: list[str], build: Path) -> None:
    """The C self-test (tests/c/selftest.c) built by zig's clang for this host and run: the
    clang code paths (target attributes, intrinsics) executed, not only compiled."""
    selftest = ROOT / "tests" / "c" / "selftest.c"
    if not selftest.is_file():
        return
    exe = build / "selftest-zig"
    srcs = sorted(glob.glob(str(ROOT / "csrc" / "*.c")))
    run([*zig, "cc", "-std=gnu11", "-O2", *WARN, "-Werror", "-I" + str(ROOT / "csrc" / "include"), *srcs,
         str(selftest), "-o", str(exe), "-lpthread", "-lm"], "build the C self-test with zig cc")
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0 or "selftest: ok" not in out.stdout:
        sys.stderr.write(out.stdout[-4000:] + out.stderr[-2000:])
        raise SystemExit("crosscheck: the zig-built C self-test failed")
    crc = next((line for line in out.stdout.splitlines() if line.startswith("crc32c:")), "")
    print(f"  host (zig cc): C self-test ok; {crc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zig", required=True, help="the zig command, e.g. 'python -m ziglang'")
    ap.add_argument("--build", default="build/crosscheck")
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    zig = shlex.split(a.zig)
    build = (ROOT / a.build).resolve()
    build.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("ZIG_GLOBAL_CACHE_DIR", str(build / "zig-cache"))
    os.environ.setdefault("ZIG_LOCAL_CACHE_DIR", str(build / "zig-cache"))
    incs = include_flags(build)
    if sys.platform == "linux":
        native_selftest(zig, build)
    syms = third_party_symbols(zig, build, incs)
    cfiles = cythonize(build)
    nsrc = len(glob.glob(str(ROOT / "csrc" / "**" / "*.c"), recursive=True))
    for target in a.targets:
        core, codecs = compile_c(zig, target, build, incs)
        print(f"  {target}: compiled {nsrc} C sources (+{sum(len(v) - 1 for v in VARIANTS.values())} variants) "
              "with -Werror")
        link(zig, target, build, core, codecs, syms)
        compile_cython(zig, target, build, incs, cfiles)
    print(f"crosscheck: ok for {', '.join(a.targets)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
