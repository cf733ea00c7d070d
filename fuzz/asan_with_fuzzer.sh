#!/usr/bin/env bash
# Build asan_with_fuzzer.so: Clang's ASan (+UBSan) runtime with libFuzzer linked in, to LD_PRELOAD
# into an uninstrumented Python running atheris (what atheris's own source install generates; its
# PyPI wheels do not ship it).  Preloading plain libclang_rt.asan would bind the extension's
# coverage callbacks to ASan's weak no-op stubs before atheris loads its libFuzzer, and the
# fuzzer would see no C coverage.  Usage: fuzz/asan_with_fuzzer.sh CLANG OUT_DIR
set -euo pipefail
CC=${1:?clang}; OUT=${2:?out dir}
RT=$("$CC" -print-resource-dir)/lib/linux
ARCH=$(uname -m)
for lib in asan fuzzer_no_main asan_cxx; do
  [ -f "$RT/libclang_rt.$lib-$ARCH.a" ] || { echo "missing $RT/libclang_rt.$lib-$ARCH.a (apt-get install libclang-rt-dev)"; exit 1; }
done
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/asan" "$TMP/fuzzer" "$TMP/cxx" "$OUT"
(cd "$TMP/asan" && ar x "$RT/libclang_rt.asan-$ARCH.a" && rm -f asan_preinit*.o)  # .preinit_array: not in a DSO
(cd "$TMP/fuzzer" && ar x "$RT/libclang_rt.fuzzer_no_main-$ARCH.a")
(cd "$TMP/cxx" && ar x "$RT/libclang_rt.asan_cxx-$ARCH.a")
"${CC/clang/clang++}" -shared -o "$OUT/asan_with_fuzzer.so" "$TMP"/asan/*.o "$TMP"/fuzzer/*.o "$TMP"/cxx/*.o \
  -lpthread -ldl -lrt -lm
echo "$OUT/asan_with_fuzzer.so"
