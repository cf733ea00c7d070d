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

.PHONY: demo test sysdeps venv install inplace refvenv clean bench asan

demo: install
	$(VPY) -m zarrbolt demo

test: install refvenv
	ZARRBOLT_REF_PYTHON=$(CURDIR)/$(REFVENV)/bin/python $(VPY) -m pytest -q -p no:cacheprovider tests

# System libraries (Debian/Ubuntu): zstd and libdeflate headers + static libs.
sysdeps:
	@if [ ! -f /usr/include/zstd.h ] || [ ! -f /usr/include/libdeflate.h ]; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libzstd-dev libdeflate-dev >/dev/null; \
	  else echo "no apt-get: zstd and libdeflate will be fetched by CMake"; fi; \
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

clean:
	rm -rf build src/zarrbolt/_ext/*.so
