# vcpkg triplet for zarrbolt's macOS x86_64 wheels: static zstd/libdeflate/lz4 built for the wheel's
# deployment target (Homebrew's bottles target the runner's own macOS release instead).
set(VCPKG_TARGET_ARCHITECTURE x64)
set(VCPKG_CRT_LINKAGE dynamic)
set(VCPKG_LIBRARY_LINKAGE static)
set(VCPKG_CMAKE_SYSTEM_NAME Darwin)
set(VCPKG_OSX_ARCHITECTURES x86_64)
set(VCPKG_OSX_DEPLOYMENT_TARGET 11.0)
set(VCPKG_BUILD_TYPE release)
