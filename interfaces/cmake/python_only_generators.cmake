# Included just before rosidl_generate_interfaces() by every interface package scripts/build_interfaces
# builds into a venv (interfaces/tf2_msgs and control_msgs themselves; MoveIt's message packages and
# composition_interfaces patched in their temporary copies): keeps only the generators a Python
# client needs, and drops the C++ ones.
#
# rosidl_default_generators registers every generator and typesupport it finds, as extensions of
# "rosidl_generate_idl_interfaces". rclpy uses only the C side:
#   rosidl_generator_c                   the C structs the Python extension converts to and from
#   rosidl_generator_type_description    share/<pkg>/<type>.json and the RIHS01 type hashes
#   rosidl_typesupport_c                 the dispatcher rclpy hands to the middleware
#   rosidl_typesupport_fastrtps_c        (de)serialisation for rmw_fastrtps_cpp, the wheels' default
#   rosidl_typesupport_introspection_c   introspection for the other middlewares
#   rosidl_generator_py                  the Python classes and their C extension
# The C++ four (rosidl_generator_cpp, rosidl_typesupport_cpp, rosidl_typesupport_fastrtps_cpp,
# rosidl_typesupport_introspection_cpp) are only for C++ programs built against this prefix, which
# a pip venv does not have; they are most of the compile time. The type hashes come from the
# definitions alone, and the bytes on the wire are CDR either way, so a C++ MoveIt on the other side
# of the graph sees the same types (docs/distributions.md, "MoveIt's messages").
# BB_ROBOT_INTERFACES_CPP=1 (environment) keeps every generator.
if("$ENV{BB_ROBOT_INTERFACES_CPP}" STREQUAL "1")
  message(STATUS "bb_robot: every rosidl generator kept (BB_ROBOT_INTERFACES_CPP=1)")
  return()
endif()
set(_bb_dropped rosidl_generator_cpp rosidl_typesupport_cpp rosidl_typesupport_fastrtps_cpp
  rosidl_typesupport_introspection_cpp)
set(_bb_needed rosidl_generator_c rosidl_generator_type_description rosidl_typesupport_c
  rosidl_typesupport_fastrtps_c rosidl_typesupport_introspection_c rosidl_generator_py)
set(_bb_kept)
set(_bb_kept_names)
foreach(_bb_extension IN LISTS AMENT_EXTENSIONS_rosidl_generate_idl_interfaces)
  string(REGEX REPLACE ":.*$" "" _bb_name "${_bb_extension}")
  if(NOT _bb_name IN_LIST _bb_dropped)
    list(APPEND _bb_kept "${_bb_extension}")
    list(APPEND _bb_kept_names "${_bb_name}")
  endif()
endforeach()
foreach(_bb_name IN LISTS _bb_needed)
  if(NOT _bb_name IN_LIST _bb_kept_names)
    message(FATAL_ERROR "bb_robot: the rosidl generator ${_bb_name} is not registered "
      "(found: ${_bb_kept_names}); rclpy needs it. Is the venv's ${_bb_name} wheel installed? "
      "scripts/setup installs it (requirements/*build.txt).")
  endif()
endforeach()
set(AMENT_EXTENSIONS_rosidl_generate_idl_interfaces ${_bb_kept})
message(STATUS "bb_robot: rosidl generators for Python clients only: ${_bb_kept_names}")
