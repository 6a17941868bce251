# SPDX-License-Identifier: BSD-3-Clause
# Installs headers, both libraries, the Redis module (LIBDIR/nidus/nidus.so), the CLI with its man page and
# bash completion, a pkg-config file and a CMake package (find_package(nidus)).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/nidus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Executable: redis-server (7.0 and later) refuses to load a module file without an execute bit, and CMake
# installs a MODULE library 0644 on some platforms (Debian among them).
install(TARGETS nidus_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/nidus
  PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/docs/nidus.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/cli/completion.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME nidus)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(TARGETS nidus_static nidus_shared EXPORT nidusTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT nidusTargets NAMESPACE nidus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nidus)

configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/nidusConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/nidusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nidus)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nidusConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nidusConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/nidusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nidus)

# The .pc file locates the prefix from its own directory, so an install moved or made with --prefix works.
file(RELATIVE_PATH NIDUS_PC_TO_PREFIX "/x/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/x")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/nidus.pc.in ${CMAKE_CURRENT_BINARY_DIR}/nidus.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nidus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
