#!/usr/bin/env bash
# cibuildwheel before-all: zstd, libdeflate and lz4 as static archives from each platform's package
# manager (see docs/wheels.md).  c-blosc and c-blosc2 come from the `blosc`/`blosc2` PyPI wheels in
# the build environment.  Nothing is vendored into the repository.
#
#   manylinux_2_28 (AlmaLinux 8)  dnf: libzstd-static + lz4-static (PowerTools), libdeflate from EPEL;
#                                 EPEL ships no libdeflate.a, so its source RPM (dnf download
#                                 --source) is rebuilt as a static archive, unpatched
#   musllinux_1_2 (Alpine)        apk: zstd-static, libdeflate-static, lz4-static
#   macOS                         vcpkg, triplets tools/vcpkg-triplets/*-osx-zb.cmake (static, built
#                                 for MACOSX_DEPLOYMENT_TARGET 11.0); prefix in $ZB_DEPS_PREFIX
#   Windows                       vcpkg, triplet x64-windows-static-md (static libs, the dynamic
#                                 CRT CPython uses)
# The build then runs with ZB_STATIC_DEPS=ON: a missing or shared library fails it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

static_from_srpm_libdeflate() {
  dnf install -y dnf-plugins-core rpm-build cpio cmake
  work=$(mktemp -d) && cd "$work"
  dnf download --source libdeflate
  rpm2cpio libdeflate-*.src.rpm | cpio -idm --quiet
  tar xf libdeflate-*.tar.*
  src=$(find . -maxdepth 1 -type d -name 'libdeflate-*' | head -1)
  cmake -S "$src" -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DLIBDEFLATE_BUILD_SHARED_LIB=OFF -DLIBDEFLATE_BUILD_GZIP=OFF -DCMAKE_INSTALL_PREFIX=/usr/local \
    -DCMAKE_INSTALL_LIBDIR=lib
  cmake --build build --target install -j "$(nproc)"
  cd / && rm -rf "$work"
}

case "$(uname -s)" in
  Linux)
    . /etc/os-release
    case "$ID" in
      alpine)
        apk add --no-cache zstd-dev zstd-static libdeflate-dev libdeflate-static lz4-dev lz4-static ;;
      almalinux | rocky | centos | rhel)
        dnf install -y epel-release dnf-plugins-core
        dnf config-manager --set-enabled powertools || dnf config-manager --set-enabled crb
        dnf install -y libzstd-devel libzstd-static lz4-devel lz4-static libdeflate-devel
        dnf install -y libdeflate-static 2>/dev/null || true
        if ! ls /usr/lib64/libdeflate.a /usr/local/lib/libdeflate.a >/dev/null 2>&1; then
          static_from_srpm_libdeflate
        fi ;;
      *) echo "wheel_deps.sh: unsupported Linux image $ID" >&2; exit 1 ;;
    esac ;;
  Darwin)
    arch="${ZB_MACOS_ARCH:-$(uname -m)}"
    case "$arch" in arm64) triplet=arm64-osx-zb ;; x86_64) triplet=x64-osx-zb ;; *) exit 1 ;; esac
    root="${VCPKG_INSTALLATION_ROOT:-$HOME/vcpkg}"
    if [ ! -x "$root/vcpkg" ]; then
      git clone --depth 1 https://github.com/microsoft/vcpkg "$root"
      "$root/bootstrap-vcpkg.sh" -disableMetrics
    fi
    "$root/vcpkg" install zstd libdeflate lz4 --triplet "$triplet" --overlay-triplets "$here/vcpkg-triplets" \
      --x-install-root "$HOME/zb-deps"
    echo "static libraries in $HOME/zb-deps/$triplet" ;;
  MINGW* | MSYS* | CYGWIN*)
    root="${VCPKG_INSTALLATION_ROOT:-C:/vcpkg}"
    "$root/vcpkg.exe" install zstd libdeflate lz4 --triplet x64-windows-static-md --x-install-root "C:/zb-deps"
    echo "static libraries in C:/zb-deps/x64-windows-static-md" ;;
  *) echo "wheel_deps.sh: unsupported system $(uname -s)" >&2; exit 1 ;;
esac
