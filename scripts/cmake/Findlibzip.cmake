# Findlibzip: the zip library the .pt2 reader uses (Debian: libzip-dev). Found here rather than
# through the package's own CMake file: Debian's libzip-targets.cmake (1.7.3) also imports the
# zipcmp/zipmerge/ziptool programs and stops the configure when libzip-tools is not installed.
#
# Defines libzip_FOUND, LIBZIP_INCLUDE_DIR, LIBZIP_LIBRARY and the imported target libzip::zip.
find_path(LIBZIP_INCLUDE_DIR zip.h)
find_library(LIBZIP_LIBRARY zip)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(libzip REQUIRED_VARS LIBZIP_LIBRARY LIBZIP_INCLUDE_DIR)

if(libzip_FOUND AND NOT TARGET libzip::zip)
  add_library(libzip::zip UNKNOWN IMPORTED)
  set_target_properties(libzip::zip PROPERTIES IMPORTED_LOCATION "${LIBZIP_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${LIBZIP_INCLUDE_DIR}")
endif()
mark_as_advanced(LIBZIP_INCLUDE_DIR LIBZIP_LIBRARY)
