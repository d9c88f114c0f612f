# The C++ API as an installed CMake package: `cmake --install` puts the public headers
# (include/layoutprof/, version.h among them), one shared library (lib/liblayoutprof.so, the
# target layoutprof_shared: the API and every layer it links, exporting only the API), and
# lib/cmake/layoutprof/ with layoutprofConfig.cmake, so that a program's CMakeLists.txt says
#
#   find_package(layoutprof REQUIRED)        # finds the LibTorch it was built against, too
#   target_link_libraries(app PRIVATE layoutprof::layoutprof)
#
# The library's own dependencies ({fmt}, nlohmann-json built in; simdjson, libzip, libpfm4,
# CUPTI its runtime libraries) are not the program's: the package finds none of them. It records
# the LibTorch version and C++ ABI (_GLIBCXX_USE_CXX11_ABI) it was built against and refuses
# another at configure time, in one line (PackageConfig.cmake.in).

include(CMakePackageConfigHelpers)

set(_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/layoutprof)
install(TARGETS layoutprof_shared EXPORT layoutprofTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/layoutprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/layoutprof/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/layoutprof)
install(EXPORT layoutprofTargets NAMESPACE layoutprof:: DESTINATION ${_package_dir})

string(SUBSTRING "${LAYOUTPROF_CXX11_ABI}" 0 1 LAYOUTPROF_PACKAGE_ABI)
configure_package_config_file(scripts/cmake/PackageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/layoutprofConfig.cmake INSTALL_DESTINATION ${_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/layoutprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/layoutprofConfig.cmake
              ${PROJECT_BINARY_DIR}/package/layoutprofConfigVersion.cmake
        DESTINATION ${_package_dir})
