# Makes interface packages build against the ROS 2 wheels from PyPI.
#
# The wheels' exported `<pkg>__rosidl_generator_py` targets carry the Python and NumPy include
# directories of the container they were built in (/opt/python/cp311-cp311/...). CMake rejects an
# imported target whose include directory does not exist, so on every imported target of the
# including project this drops the include directories under /opt/python/ and puts the include
# directories of this machine's Python (the one given as Python3_EXECUTABLE) and NumPy instead.
#
# Include it right after project(). The fix runs when the top-level CMakeLists.txt has been read
# (cmake_language(DEFER)), so it also reaches the targets that rosidl_generate_interfaces() imports
# while it runs. Where no imported target names /opt/python/ (a regular ROS 2 install) it changes
# nothing.
cmake_minimum_required(VERSION 3.21)  # cmake_language(DEFER), IMPORTED_TARGETS

function(bb_fix_wheel_python_includes)
  get_directory_property(imported_targets DIRECTORY "${CMAKE_SOURCE_DIR}" IMPORTED_TARGETS)
  set(real_include_dirs)
  foreach(target IN LISTS imported_targets)
    get_target_property(include_dirs "${target}" INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT include_dirs OR NOT include_dirs MATCHES "(^|;)/opt/python/")
      continue()
    endif()
    if(NOT real_include_dirs)
      find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
      set(real_include_dirs ${Python3_INCLUDE_DIRS} ${Python3_NumPy_INCLUDE_DIRS})
    endif()
    list(FILTER include_dirs EXCLUDE REGEX "^/opt/python/")
    list(APPEND include_dirs ${real_include_dirs})
    list(REMOVE_DUPLICATES include_dirs)
    set_target_properties("${target}" PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${include_dirs}")
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL bb_fix_wheel_python_includes)
