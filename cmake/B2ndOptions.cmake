option(B2ND_BUILD_TESTS      "Unit, golden and property tests"              ${PROJECT_IS_TOP_LEVEL})
option(B2ND_BUILD_FUZZERS    "Fuzz targets (corpus replay unless libFuzzer)" ${B2ND_BUILD_TESTS})
option(B2ND_BUILD_EXAMPLES   "Examples and the demo"                        ${PROJECT_IS_TOP_LEVEL})
option(B2ND_BUILD_TOOLS       "The b2nd command-line tool"                   ON)
option(B2ND_BUILD_BENCHMARKS "Benchmarks"                                   OFF)
option(B2ND_WERROR           "Warnings are errors"                          OFF)
option(B2ND_INSTALL          "Install rules and package config"             ${PROJECT_IS_TOP_LEVEL})
set(B2ND_CORPUS_DIR "${PROJECT_SOURCE_DIR}/../shared/corpus" CACHE PATH
    "The shared test corpus (files written by c-blosc2 and python-blosc2)")
set(B2ND_FUZZ_ENGINE "replay" CACHE STRING "'replay' (any compiler) or 'libfuzzer' (clang)")

# Warnings for our own targets only (never PUBLIC).
add_library(b2nd_warnings INTERFACE)
target_compile_options(b2nd_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wold-style-cast
  -Wnon-virtual-dtor -Wcast-align -Wdouble-promotion -Wformat=2
  $<$<BOOL:${B2ND_WERROR}>:-Werror>)

# A header-only dependency used inside a target only: its include directories and definitions,
# without linking it (for an installed static library, a PRIVATE link would still be exported as
# a $<LINK_ONLY:...> entry that every consumer must resolve).
function(b2nd_private_use target)
  foreach(dep ${ARGN})
    target_include_directories(${target} SYSTEM PRIVATE
      $<TARGET_PROPERTY:${dep},INTERFACE_INCLUDE_DIRECTORIES>)
    target_compile_definitions(${target} PRIVATE
      $<TARGET_PROPERTY:${dep},INTERFACE_COMPILE_DEFINITIONS>)
  endforeach()
endfunction()

# Our warnings and sanitizer flags (B2ndSanitizers.cmake) on an installed target, kept out of its
# exported interface.
function(b2nd_own_flags target)
  foreach(flags b2nd_warnings b2nd_sanitize)
    target_compile_options(${target} PRIVATE $<TARGET_PROPERTY:${flags},INTERFACE_COMPILE_OPTIONS>)
    target_link_options(${target} PRIVATE $<TARGET_PROPERTY:${flags},INTERFACE_LINK_OPTIONS>)
  endforeach()
endfunction()
