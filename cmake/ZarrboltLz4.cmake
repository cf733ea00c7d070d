# LZ4 for the numcodecs.lz4 codec (the _lz4 extension module).
#
# Order: an explicit -DZB_LZ4_INCLUDE_DIR/-DZB_LZ4_LIBRARY, then the system (Debian: liblz4-dev,
# static library preferred), then the LZ4 compiled into the c-blosc2 library the build links
# anyway (cmake/ZarrboltDeps.cmake): c-blosc2 bundles LZ4's block API, so a platform without
# liblz4 needs no download; its symbols are checked here, and csrc/codecs/lz4_codec.c declares
# them itself then (-DZB_LZ4_FROM_BLOSC2: the c-blosc2 wheel ships no lz4.h).  Defines the target
# zb::lz4 and, for the blosc2 case, the compile definition the module needs (ZB_LZ4_DEFINES).
set(ZB_LZ4_DEFINES "")
if(NOT ZB_LZ4_LIBRARY)
  find_path(ZB_LZ4_INCLUDE_DIR lz4.h)
  if(ZB_STATIC_DEPS AND NOT WIN32)
    # only a static liblz4; without one the LZ4 inside c-blosc2 (static too) serves
    find_library(ZB_LZ4_LIBRARY NAMES liblz4.a)
  else()
    find_library(ZB_LZ4_LIBRARY NAMES liblz4.a lz4_static lz4)
  endif()
endif()
if(ZB_LZ4_LIBRARY AND ZB_LZ4_INCLUDE_DIR)
  message(STATUS "zarrbolt: lz4: ${ZB_LZ4_LIBRARY}")
  zb_import(lz4 "${ZB_LZ4_INCLUDE_DIR}" "${ZB_LZ4_LIBRARY}")
else()
  if(TARGET blosc2_static)
    set(_zb_lz4_have ON) # fetched c-blosc2: always built with its internal LZ4
  else()
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_LIBRARIES "${ZB_BLOSC2_LIBRARY}" Threads::Threads ${CMAKE_DL_LIBS})
    if(NOT WIN32)
      list(APPEND CMAKE_REQUIRED_LIBRARIES m)
    endif()
    check_c_source_compiles("
      int LZ4_compressBound(int);
      int LZ4_compress_fast(const char *, char *, int, int, int);
      int LZ4_decompress_safe(const char *, char *, int, int);
      int LZ4_decompress_safe_partial(const char *, char *, int, int, int);
      const char *LZ4_versionString(void);
      int main(void) { char o[32]; int b = LZ4_compressBound(4); int n = LZ4_compress_fast(\"abcd\", o, 4, b, 1);
        return n + LZ4_decompress_safe(o, o + 16, n, 4) + LZ4_decompress_safe_partial(o, o + 16, n, 2, 4)
               + (LZ4_versionString() != 0); }"
      ZB_LZ4_IN_BLOSC2)
    unset(CMAKE_REQUIRED_LIBRARIES)
    set(_zb_lz4_have ${ZB_LZ4_IN_BLOSC2})
  endif()
  if(NOT _zb_lz4_have)
    message(FATAL_ERROR "zarrbolt: no LZ4 (apt install liblz4-dev, or a c-blosc2 built with its internal LZ4)")
  endif()
  message(STATUS "zarrbolt: lz4: the copy inside c-blosc2")
  add_library(zb_lz4_from_blosc2 INTERFACE)
  target_link_libraries(zb_lz4_from_blosc2 INTERFACE zb::blosc2 Threads::Threads)
  add_library(zb::lz4 ALIAS zb_lz4_from_blosc2)
  set(ZB_LZ4_DEFINES ZB_LZ4_FROM_BLOSC2)
endif()
