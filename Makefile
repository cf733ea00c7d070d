# zarrbolt developer and CI entry points.  Everything installs what it needs.
#   make demo   build + install, then write/read a synthetic sharded microscopy volume
#   make test   build + install, then run the full test suite (compat tests included)
PYTHON ?= python3
REF_PYTHON ?= $(shell for p in $$(command -v python3.12) $$HOME/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do [ -x "$$p" ] && "$$p" -c "import venv" >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
VPY := $(VENV)/bin/python
REFVENV := .venv-ref
BUILD_DEPS := "scikit-build-core>=0.10" "cython>=3.0.10" "numpy>=2.0" "blosc2>=2.7" "blosc>=1.11.3" cmake ninja
TEST_DEPS := "pytest>=7" "hypothesis>=6" pytest-timeout

.PHONY: demo test sysdeps venv install inplace refvenv clean bench asan wincheck armcheck

demo: install
	$(VPY) -m zarrbolt demo

test: install refvenv
	ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFVENV)/bin/python $(VPY) -m pytest -q -p no:cacheprovider tests

# System libraries (Debian/Ubuntu): zstd, libdeflate and lz4 headers + static libs.
sysdeps:
	@if [ ! -f /usr/include/zstd.h ] || [ ! -f /usr/include/libdeflate.h ] || [ ! -f /usr/include/lz4.h ]; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libzstd-dev libdeflate-dev liblz4-dev >/dev/null; \
	  else echo "no apt-get: zstd and libdeflate will be fetched by CMake, LZ4 taken from c-blosc2"; fi; \
	fi

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q $(BUILD_DEPS) $(TEST_DEPS)

venv: $(VPY)

# A regular (non-editable) install, exactly what users get from `pip install .`.
install: sysdeps venv
	$(VPY) -m pip install -q --no-build-isolation --force-reinstall --no-deps .

# Development build: extension modules next to their sources; use PYTHONPATH=src.
inplace: sysdeps venv
	mkdir -p build
	flock build/.lock sh -c '$(VENV)/bin/cmake -S . -B build/dev -G Ninja -DZB_INPLACE=ON \
	  -DPython_EXECUTABLE=$(CURDIR)/$(VPY) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null \
	  && $(VENV)/bin/cmake --build build/dev'

# Reference implementations (zarr-python, tensorstore, ...) for the compat tests and the
# anchors benchmark, in their own Python 3.12 virtualenv; never dependencies of zarrbolt.
refvenv: $(REFVENV)/bin/python
$(REFVENV)/bin/python:
	@if [ -z "$(REF_PYTHON)" ]; then echo "no python3.12: compat tests will be skipped"; else \
	  $(REF_PYTHON) -m venv $(REFVENV) && $(REFVENV)/bin/pip install -q "zarr>=3.1" tensorstore zarrs numcodecs crc32c google-crc32c blosc2 zlib-ng "cast-value-rs>=0.4.2" \
	  || { echo "reference venv failed: compat tests will be skipped"; rm -rf $(REFVENV); }; fi

asan: sysdeps venv
	mkdir -p build
	$(VENV)/bin/cmake -S . -B build/asan -G Ninja -DZB_INPLACE=ON -DZB_SANITIZE=ON \
	  -DPython_EXECUTABLE=$(CURDIR)/$(VPY) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja
	$(VENV)/bin/cmake --build build/asan

# Compile-check every C source for Windows with MinGW-w64 (Debian: gcc-mingw-w64-x86-64-posix),
# so the _WIN32 branches (file reads, thread-local contexts, CPU detection) at least build.
# Headers not in MinGW's own include path (zstd, libdeflate, c-blosc/c-blosc2 from the venv's
# wheels) come from the host; nothing is linked or run.
WIN_CC ?= x86_64-w64-mingw32-gcc
wincheck: venv
	@command -v $(WIN_CC) >/dev/null || { echo "$(WIN_CC) not found (apt-get install gcc-mingw-w64-x86-64-posix)"; exit 1; }
	@B2=$$($(VPY) -c "import blosc2, os; print(os.path.join(os.path.dirname(blosc2.__file__), 'include'))"); \
	for f in csrc/*.c csrc/codecs/*.c; do \
	  $(WIN_CC) -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -Wno-unused-function -Werror -Icsrc/include \
	    -I$(VENV)/include -I$$B2 -idirafter /usr/include -fsyntax-only $$f || exit 1; \
	done; echo "wincheck: every C source compiles for x86_64-w64-mingw32"

# Run the C self-test (tests/c/selftest.c) on aarch64 under qemu-user: the ARMv8 CRC32C code,
# the pool and the portable kernels on a CPU this project's machines do not have.
armcheck: venv
	@command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null; }
	$(VPY) -m pytest -q -p no:cacheprovider tests/kernels/test_c_selftest.py

clean:
	rm -rf build src/zarrbolt/_ext/*.so
