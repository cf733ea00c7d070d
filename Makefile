# zarrbolt developer and CI entry points.  Everything installs what it needs.
#   make demo   build + install, then write/read a synthetic sharded microscopy volume
#   make test   build + install, then run the full test suite (compat tests included), then, in the
#               reference venv, tests/ecosystem and zarr-python's own tests against zarrbolt's pipeline
#   make zarr-suite   zarr-python's test suite against zarrbolt's codec pipeline (unbounded)
PYTHON ?= python3
REF_PYTHON ?= $(shell for p in $$(command -v python3.12) $$HOME/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do [ -x "$$p" ] && "$$p" -c "import venv" >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
VPY := $(VENV)/bin/python
REFVENV := .venv-ref
BUILD_DEPS := "scikit-build-core>=0.10" "cython>=3.0.10" "numpy>=2.0" "blosc2>=2.7" "blosc>=1.11.3" cmake ninja
TEST_DEPS := "pytest>=7" "hypothesis>=6" pytest-timeout
# Remote-store tests: obstore and fsspec (zarrbolt's optional extras) and a real S3 API server
# (moto_server) on loopback.  Bump TEST_STAMP when these change: an existing venv is upgraded.
REMOTE_TEST_DEPS := "obstore>=0.6" "fsspec>=2023.10" aiohttp "moto[server]>=5"
TEST_STAMP := $(VENV)/.zarrbolt-test-deps-1
# Reference venv: the reference implementations, the ecosystem (dask, xarray, ome-zarr-py), what
# zarr-python's own test suite needs (its `test` dependency group, less coverage/benchmark tooling
# it does not use here) and zarrbolt's build deps (zarrbolt is installed there non-editable).
ZARR_VERSION := 3.4.2
REF_DEPS := "zarr==$(ZARR_VERSION)" tensorstore zarrs numcodecs crc32c google-crc32c blosc2 zlib-ng "cast-value-rs>=0.4.2" \
  "pytest>=9" pytest-asyncio "hypothesis>=6" pytest-timeout pytest-xdist pytest-benchmark "fsspec>=2023.10.0" \
  "dask[array,distributed]" xarray ome-zarr obstore "moto[server]>=5" s3fs boto3 napari
# Bump when REF_DEPS change: an existing reference venv is then upgraded in place.
REF_STAMP := $(REFVENV)/.zarrbolt-ref-deps-4
REFPY := $(REFVENV)/bin/python
ZARR_SUITE_CACHE ?= $(HOME)/.cache/zarrbolt/zarr-suite

.PHONY: demo test sysdeps venv install inplace refvenv refinstall ecosystem zarr-suite clean bench asan wincheck armcheck

demo: install
	$(VPY) -m zarrbolt demo

# Main suite (.venv), then under the reference venv (when it could be built): tests/ecosystem and
# zarr-python's own tests against zarrbolt's pipeline (bounded: reference outcomes are cached).
test: install refinstall
	@t0=$$(date +%s); ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFPY) $(VPY) -m pytest -q -p no:cacheprovider tests \
	  && echo "main suite: $$(( $$(date +%s) - t0 )) s"
	@$(ECOSYSTEM_RUN)
	@$(ZARR_SUITE_RUN) --bounded; fi

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

$(TEST_STAMP): | $(VPY)
	$(VPY) -m pip install -q $(BUILD_DEPS) $(TEST_DEPS) $(REMOTE_TEST_DEPS)
	rm -f $(VENV)/.zarrbolt-test-deps-*; touch $@

venv: $(VPY) $(TEST_STAMP)

# A regular (non-editable) install, exactly what users get from `pip install .`.
install: sysdeps venv
	$(VPY) -m pip install -q --no-build-isolation --force-reinstall --no-deps .

# Development build: extension modules next to their sources; use PYTHONPATH=src.
inplace: sysdeps venv
	mkdir -p build
	flock build/.lock sh -c '$(VENV)/bin/cmake -S . -B build/dev -G Ninja -DZB_INPLACE=ON \
	  -DPython_EXECUTABLE=$(CURDIR)/$(VPY) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null \
	  && $(VENV)/bin/cmake --build build/dev'

# Reference implementations (zarr-python, tensorstore, ...) for the compat tests and the anchors
# benchmark, and the ecosystem around zarr-python, in their own Python 3.12 virtualenv; never
# dependencies of zarrbolt.  An existing venv is upgraded in place (REF_STAMP), never recreated.
refvenv: $(REF_STAMP)
$(REF_STAMP):
	@fresh=; if [ ! -x $(REFPY) ]; then \
	  if [ -z "$(REF_PYTHON)" ]; then echo "no python3.12: compat, ecosystem and zarr-suite tests will be skipped"; exit 0; fi; \
	  fresh=1; $(REF_PYTHON) -m venv $(REFVENV) || { echo "python3.12 -m venv failed: reference tests will be skipped"; rm -rf $(REFVENV); exit 0; }; fi; \
	if $(REFPY) -m pip install -q $(REF_DEPS) $(BUILD_DEPS); then rm -f $(REFVENV)/.zarrbolt-ref-deps-*; touch $@; \
	else echo "reference venv could not be built or upgraded: ecosystem and zarr-suite tests will be skipped"; \
	  [ -z "$$fresh" ] || rm -rf $(REFVENV); fi

# zarrbolt itself in the reference venv, non-editable, rebuilt on every run (like `install`).
refinstall: sysdeps refvenv
	@if [ -f $(REF_STAMP) ]; then t0=$$(date +%s); \
	  $(REFPY) -m pip install -q --no-build-isolation --force-reinstall --no-deps . \
	  && echo "zarrbolt installed in $(REFVENV): $$(( $$(date +%s) - t0 )) s"; fi

# Tests that import zarr-python / dask / xarray / ome-zarr, under the reference venv.
ECOSYSTEM_RUN = if [ ! -f $(REF_STAMP) ]; then echo "no reference venv: tests/ecosystem skipped"; else \
  t0=$$(date +%s); $(REFPY) -m pytest -q -p no:cacheprovider -o asyncio_default_fixture_loop_scope=function tests/ecosystem; rc=$$?; \
  [ $$rc = 5 ] && rc=0; echo "ecosystem tests: $$(( $$(date +%s) - t0 )) s"; exit $$rc; fi
ecosystem: refinstall
	@$(ECOSYSTEM_RUN)

# zarr-python's own tests (sdist fetched once into ZARR_SUITE_CACHE) against zarrbolt's pipeline:
# its codec-pipeline behaviour suite, then its array/indexing/codec/group tests compared with zarr's
# default and its FusedCodecPipeline (see tests/zarr_suite/run_suite.py --help).
ZARR_SUITE_RUN = if [ ! -f $(REF_STAMP) ]; then echo "no reference venv: zarr-suite skipped"; else \
  $(REFPY) tests/zarr_suite/run_suite.py --zarr-version $(ZARR_VERSION) --cache $(ZARR_SUITE_CACHE) $(ZARR_SUITE_ARGS)
zarr-suite: refinstall
	@$(ZARR_SUITE_RUN); fi

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
