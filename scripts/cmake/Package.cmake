# The C++ API as an installed CMake package: `cmake --install` puts the public headers
# (include/layoutprof/), the static libraries of layoutprof_api and of every layer it links
# (lib/layoutprof/), and lib/cmake/layoutprof/ with layoutprofConfig.cmake, so that a program's
# CMakeLists.txt says
#
#   find_package(layoutprof REQUIRED)        # finds the LibTorch it was built against, too
#   target_link_libraries(app PRIVATE layoutprof::layoutprof)
#
# The package records the LibTorch version and C++ ABI (_GLIBCXX_USE_CXX11_ABI) it was built
# against and refuses another at configure time, in one line (PackageConfig.cmake.in).

include(CMakePackageConfigHelpers)

# The project's static libraries `target` links, itself included, transitively.
function(_layoutprof_linked_libraries target out)
  set(seen ${${out}})
  if(target IN_LIST seen)
    return()
  endif()
  list(APPEND seen ${target})
  get_target_property(links ${target} LINK_LIBRARIES)
  foreach(lib IN LISTS links)
    if(lib MATCHES "^layoutprof_" AND TARGET ${lib})
      _layoutprof_linked_libraries(${lib} seen)
    endif()
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

set(_libraries)
_layoutprof_linked_libraries(layoutprof_api _libraries)
set(_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/layoutprof)
install(TARGETS ${_libraries} EXPORT layoutprofTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/layoutprof)
install(DIRECTORY include/layoutprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT layoutprofTargets NAMESPACE layoutprof:: DESTINATION ${_package_dir})

# What the libraries link privately, found again where the package is used.
string(SUBSTRING "${LAYOUTPROF_CXX11_ABI}" 0 1 LAYOUTPROF_PACKAGE_ABI)
set(LAYOUTPROF_PACKAGE_CUPTI "")
if(LAYOUTPROF_HAVE_CUPTI)
  get_target_property(LAYOUTPROF_PACKAGE_CUPTI CUDA::cupti IMPORTED_LOCATION)
endif()
configure_package_config_file(scripts/cmake/PackageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/layoutprofConfig.cmake INSTALL_DESTINATION ${_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/layoutprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/layoutprofConfig.cmake
              ${PROJECT_BINARY_DIR}/package/layoutprofConfigVersion.cmake
              scripts/cmake/FindPFM.cmake scripts/cmake/Findlibzip.cmake
        DESTINATION ${_package_dir})
