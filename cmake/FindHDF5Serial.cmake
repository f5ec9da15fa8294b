# Debian's serial libhdf5 (libhdf5-dev), found by hand: CMake's FindHDF5 probes with a C program,
# and b2nd builds C++ only. Defines HDF5Serial::HDF5 and HDF5Serial::HL, its high-level library
# (dimension scales), imported, so that an installed b2nd names no absolute path.
find_path(HDF5Serial_INCLUDE_DIR hdf5.h PATH_SUFFIXES hdf5/serial)
find_library(HDF5Serial_LIBRARY NAMES hdf5_serial hdf5 PATH_SUFFIXES hdf5/serial)
find_library(HDF5Serial_HL_LIBRARY NAMES hdf5_serial_hl hdf5_hl PATH_SUFFIXES hdf5/serial)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(HDF5Serial
  REQUIRED_VARS HDF5Serial_LIBRARY HDF5Serial_HL_LIBRARY HDF5Serial_INCLUDE_DIR)
if(HDF5Serial_FOUND AND NOT TARGET HDF5Serial::HDF5)
  add_library(HDF5Serial::HDF5 UNKNOWN IMPORTED)
  set_target_properties(HDF5Serial::HDF5 PROPERTIES
    IMPORTED_LOCATION "${HDF5Serial_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${HDF5Serial_INCLUDE_DIR}")
  add_library(HDF5Serial::HL UNKNOWN IMPORTED)
  set_target_properties(HDF5Serial::HL PROPERTIES
    IMPORTED_LOCATION "${HDF5Serial_HL_LIBRARY}"
    INTERFACE_LINK_LIBRARIES HDF5Serial::HDF5)
endif()
mark_as_advanced(HDF5Serial_INCLUDE_DIR HDF5Serial_LIBRARY HDF5Serial_HL_LIBRARY)
