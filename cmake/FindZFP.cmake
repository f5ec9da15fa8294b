# libzfp, found by hand: Debian's zfp-config.cmake asks for OpenMP's C component, and b2nd builds
# C++ only. Defines ZFP::ZFP (imported, so that an installed b2nd names no absolute path).
find_path(ZFP_INCLUDE_DIR zfp.h)
find_library(ZFP_LIBRARY zfp)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZFP REQUIRED_VARS ZFP_LIBRARY ZFP_INCLUDE_DIR)
if(ZFP_FOUND AND NOT TARGET ZFP::ZFP)
  add_library(ZFP::ZFP UNKNOWN IMPORTED)
  set_target_properties(ZFP::ZFP PROPERTIES
    IMPORTED_LOCATION "${ZFP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZFP_INCLUDE_DIR}")
endif()
mark_as_advanced(ZFP_INCLUDE_DIR ZFP_LIBRARY)
