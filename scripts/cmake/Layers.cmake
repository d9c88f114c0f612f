# Layers that cannot climb: each layer of layoutprof is a folder of src/, and a target of a
# layer gets on its include path one folder, ${PROJECT_BINARY_DIR}/layers/<layer>/, holding a
# symbolic link to its own src/<folder> and to the folder of every layer its edges reach (the
# edges' transitive closure), so that "<folder>/x.h" of any other layer is not found. Nothing
# puts src/ itself on an include path. The edges are written down in src/README.md.
#
#   layoutprof_layer(<layer> [FOLDER <folder>] [USES <lower layer>...] [SOURCES <file>...])
#       declares a layer (FOLDER: its folder under src/, the layer's name by default; two
#       layers may share one) and, with SOURCES, its static library layoutprof_<layer>,
#       linked to the libraries of the layers it uses.
#   layoutprof_layer_library(<target> <layer> <file>...)
#       another library of a declared layer (one that needs LibTorch or CUPTI, say), linked
#       to the layer's libraries declared before it.
#   layoutprof_sees(<target> <layer>...)
#       a program or test target that sees those layers and what they reach.
#   layoutprof_sources_see(<layer> <file>...)
#       the same for single files (the unit tests: each file sees its layer and below).

function(layoutprof_layer layer)
  cmake_parse_arguments(L "" "FOLDER" "USES;SOURCES" ${ARGN})
  if(NOT L_FOLDER)
    set(L_FOLDER ${layer})
  endif()
  get_property(known GLOBAL PROPERTY LAYOUTPROF_LAYERS)
  if(layer IN_LIST known)
    message(FATAL_ERROR "layoutprof_layer: ${layer} declared twice")
  endif()
  set(folders ${L_FOLDER})
  foreach(lower IN LISTS L_USES)
    if(NOT lower IN_LIST known)
      message(FATAL_ERROR "layoutprof_layer: ${layer} uses ${lower}, which is not declared (yet)")
    endif()
    get_property(reach GLOBAL PROPERTY LAYOUTPROF_LAYER_${lower}_FOLDERS)
    list(APPEND folders ${reach})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set_property(GLOBAL APPEND PROPERTY LAYOUTPROF_LAYERS ${layer})
  set_property(GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_FOLDERS ${folders})
  set_property(GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_USES ${L_USES})

  set(view ${PROJECT_BINARY_DIR}/layers/${layer})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  foreach(folder IN LISTS folders)
    if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/src/${folder})
      message(FATAL_ERROR "layoutprof_layer: ${layer} has no folder src/${folder}")
    endif()
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${view}/${folder} SYMBOLIC)
  endforeach()

  if(L_SOURCES)
    layoutprof_layer_library(layoutprof_${layer} ${layer} ${L_SOURCES})
  endif()
endfunction()

# The libraries a layer's code links against: its own, else those of the layers it uses.
function(_layoutprof_layer_libraries layer out)
  get_property(libs GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_LIBRARIES)
  if(NOT libs)
    get_property(uses GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_USES)
    foreach(lower IN LISTS uses)
      _layoutprof_layer_libraries(${lower} lower_libs)
      list(APPEND libs ${lower_libs})
    endforeach()
  endif()
  list(REMOVE_DUPLICATES libs)
  set(${out} ${libs} PARENT_SCOPE)
endfunction()

function(layoutprof_layer_library target layer)
  add_library(${target} STATIC ${ARGN})
  layoutprof_sees(${target} ${layer})
  # The layer's libraries declared before this one, then those of the layers it uses.
  get_property(libs GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_LIBRARIES)
  get_property(uses GLOBAL PROPERTY LAYOUTPROF_LAYER_${layer}_USES)
  foreach(lower IN LISTS uses)
    _layoutprof_layer_libraries(${lower} lower_libs)
    list(APPEND libs ${lower_libs})
  endforeach()
  if(libs)
    target_link_libraries(${target} PUBLIC ${libs})
  endif()
  set_property(GLOBAL APPEND PROPERTY LAYOUTPROF_LAYER_${layer}_LIBRARIES ${target})
  layoutprof_warnings(${target})
endfunction()

function(_layoutprof_views out)
  get_property(known GLOBAL PROPERTY LAYOUTPROF_LAYERS)
  set(views)
  foreach(layer IN LISTS ARGN)
    if(NOT layer IN_LIST known)
      message(FATAL_ERROR "layoutprof: no layer ${layer}")
    endif()
    list(APPEND views ${PROJECT_BINARY_DIR}/layers/${layer})
  endforeach()
  set(${out} ${views} PARENT_SCOPE)
endfunction()

function(layoutprof_sees target)
  _layoutprof_views(views ${ARGN})
  target_include_directories(${target} PRIVATE ${views})
endfunction()

function(layoutprof_sources_see layer)
  _layoutprof_views(views ${layer})
  set_property(SOURCE ${ARGN} APPEND PROPERTY INCLUDE_DIRECTORIES ${views})
endfunction()
