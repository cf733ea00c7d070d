"""The C self-test (tests/c/selftest.c): the plain-C kernels with no Python in between, built
with the system compiler and run; and, where an aarch64 cross compiler and qemu-user are
installed (Debian: gcc-aarch64-linux-gnu, qemu-user; ``make armcheck``), built for aarch64 and
run under emulation, which is where the ARMv8 CRC32C code runs."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = sorted(glob.glob(os.path.join(ROOT, "csrc", "*.c"))) + [os.path.join(ROOT, "tests", "c", "selftest.c")]
FLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-unused-function",
         "-I" + os.path.join(ROOT, "csrc", "include")]


def build_and_run(cc, tmp_path, runner=()):
    exe = str(tmp_path / "selftest")
    subprocess.run([cc, *FLAGS, *SOURCES, "-o", exe, "-lpthread", "-lm"], check=True, capture_output=True, text=True)
    out = subprocess.run([*runner, exe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "selftest: ok" in out.stdout
    return out.stdout


@pytest.mark.skipif(os.name == "nt" or not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
def test_native(tmp_path):
    out = build_and_run(shutil.which("cc") or shutil.which("gcc"), tmp_path)
    assert "crc32c:" in out and "pool:" in out


ARM_CC = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64")


@pytest.mark.skipif(not (ARM_CC and QEMU and os.path.isdir("/usr/aarch64-linux-gnu")),
                    reason="no aarch64 cross compiler / qemu-user (make armcheck installs them)")
@pytest.mark.parametrize("cpu", ["max", "cortex-a53"])
def test_aarch64_under_qemu(tmp_path, cpu):
    out = build_and_run(ARM_CC, tmp_path, (QEMU, "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu"))
    assert "(auto: armv8)" in out  # the CRC32C instructions were found and used
