# Given to every interface package scripts/build_interfaces builds, as CMAKE_PROJECT_INCLUDE (read
# right after the package's project()): compiles each of the package's generated C typesupports and
# its Python extension as unity builds, sixteen generated files to a translation unit, so the headers
# they all include (Fast CDR's C++ templates above all) are parsed once per batch, not once per
# message type. Measured on moveit_msgs (2026-12-07, 2 cores): 249 → 146 CPU-s for the whole build,
# the Fast DDS typesupport 95 → 29 CPU-s (docs/distributions.md, "How they are compiled").
#
# Not rosidl_generator_c: its *__description.c files define the same static names (the type names
# each message references, the encodings), which one translation unit cannot hold, and the rest of
# it gained nothing. A name clash anywhere else would stop the compile, not change a message:
# test/nodes/test_built_interfaces.py round-trips every message type of every package built so.
# BB_ROBOT_INTERFACES_UNITY=0 (environment) compiles file by file.
if("$ENV{BB_ROBOT_INTERFACES_UNITY}" STREQUAL "0")
  message(STATUS "bb_robot: no unity builds (BB_ROBOT_INTERFACES_UNITY=0)")
  return()
endif()

function(_bb_robot_unity_builds)
  set(_bb_unity)
  foreach(_bb_suffix rosidl_typesupport_c rosidl_typesupport_fastrtps_c rosidl_typesupport_introspection_c
      rosidl_generator_py)
    set(_bb_target ${PROJECT_NAME}__${_bb_suffix})
    if(TARGET ${_bb_target})
      set_target_properties(${_bb_target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
      list(APPEND _bb_unity ${_bb_suffix})
    endif()
  endforeach()
  list(JOIN _bb_unity ", " _bb_unity)
  message(STATUS "bb_robot: unity builds of ${PROJECT_NAME}'s ${_bb_unity}")
endfunction()
cmake_language(DEFER CALL _bb_robot_unity_builds)
