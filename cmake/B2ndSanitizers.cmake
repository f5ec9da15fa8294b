# -DB2ND_SANITIZE=address,undefined  or  -DB2ND_SANITIZE=thread
set(B2ND_SANITIZE "" CACHE STRING "'address,undefined', 'thread' or empty")
add_library(b2nd_sanitize INTERFACE)
if(B2ND_SANITIZE)
  target_compile_options(b2nd_sanitize INTERFACE
    -fsanitize=${B2ND_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(b2nd_sanitize INTERFACE -fsanitize=${B2ND_SANITIZE})
endif()
if(B2ND_FUZZ_ENGINE STREQUAL "libfuzzer")
  # Coverage instrumentation for the library itself, so that libFuzzer sees inside it.
  target_compile_options(b2nd_sanitize INTERFACE -fsanitize=fuzzer-no-link)
endif()
