# Install rules: the library, its public headers, a CMake package (find_package(b2nd) ->
# b2nd::b2nd, and b2nd::xtensor where xtensor is found) and a relocatable pkg-config file.
include(CMakePackageConfigHelpers)
set(B2ND_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/b2nd")

install(TARGETS b2nd EXPORT b2nd-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/b2nd DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES "${PROJECT_BINARY_DIR}/include/b2nd/version.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/b2nd)
install(EXPORT b2nd-targets NAMESPACE b2nd:: DESTINATION ${B2ND_CMAKE_DIR})
if(TARGET b2nd_xtensor)
  # Its own export set: b2nd-config.cmake loads it only where xtensor is found.
  set_target_properties(b2nd_xtensor PROPERTIES EXPORT_NAME xtensor)
  install(TARGETS b2nd_xtensor EXPORT b2nd-xtensor-targets)
  install(EXPORT b2nd-xtensor-targets NAMESPACE b2nd:: DESTINATION ${B2ND_CMAKE_DIR})
endif()

if(TARGET b2nd_mpi)
  # Its own export set too: loaded only where MPI is found.
  install(TARGETS b2nd_mpi EXPORT b2nd-mpi-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT b2nd-mpi-targets NAMESPACE b2nd:: DESTINATION ${B2ND_CMAKE_DIR})
endif()

configure_package_config_file(cmake/b2nd-config.cmake.in
  "${PROJECT_BINARY_DIR}/b2nd-config.cmake" INSTALL_DESTINATION ${B2ND_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/b2nd-config-version.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/b2nd-config.cmake"
              "${PROJECT_BINARY_DIR}/b2nd-config-version.cmake"
              cmake/FindLZ4.cmake cmake/FindZFP.cmake cmake/FindHDF5Serial.cmake
        DESTINATION ${B2ND_CMAKE_DIR})

# The prefix relative to the .pc file, so that an installed tree can be moved.
file(RELATIVE_PATH B2ND_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" B2ND_PC_TO_PREFIX "${B2ND_PC_TO_PREFIX}")
# A static libb2nd (the default) needs its dependencies on every link line: plain
# `pkg-config --libs b2nd` must work, not only with --static. A shared one hides them.
get_target_property(_b2nd_type b2nd TYPE)
if(_b2nd_type STREQUAL "STATIC_LIBRARY")
  set(B2ND_PC_REQUIRES "Requires")
  set(B2ND_PC_LIBS_PRIVATE "")
  set(B2ND_PC_DEPS "${B2ND_PC_ZFP}${B2ND_PC_CURL}${B2ND_PC_HDF5}")
else()
  set(B2ND_PC_REQUIRES "Requires.private")
  set(B2ND_PC_LIBS_PRIVATE "Libs.private:${B2ND_PC_ZFP}${B2ND_PC_CURL}${B2ND_PC_HDF5}")
  set(B2ND_PC_DEPS "")
endif()
configure_file(cmake/b2nd.pc.in "${PROJECT_BINARY_DIR}/b2nd.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/b2nd.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET b2nd_cli)
  install(TARGETS b2nd_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
