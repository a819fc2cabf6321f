# Used by `make setup` only (passed as CMAKE_PROJECT_INCLUDE); colcon builds on a ROS
# install do not need it.
#
# The ROS 2 PyPI wheels export their `<pkg>::<pkg>__rosidl_generator_py` CMake targets
# with the Python and NumPy include directories of the machine that built the wheels
# (/opt/python/cp311-cp311/...). Those paths do not exist here, so CMake's generate step
# fails as soon as a package links against them (every rosidl package with DEPENDENCIES
# does). The directories such a target stands for are the headers of the interpreter we
# build the extension for, so at the end of configuration we point every imported
# *__rosidl_generator_py target whose include directories are missing at the headers of
# Python3_EXECUTABLE.

function(_wheel_python_includes_fix)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  set(real_dirs ${Python3_INCLUDE_DIRS} ${Python3_NumPy_INCLUDE_DIRS})
  get_property(targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    if(NOT target MATCHES "__rosidl_generator_py$")
      continue()
    endif()
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT dirs)
      continue()
    endif()
    set(missing FALSE)
    foreach(dir IN LISTS dirs)
      if(NOT EXISTS "${dir}")
        set(missing TRUE)
      endif()
    endforeach()
    if(missing)
      message(STATUS "Python include dirs of ${target}: ${dirs} -> ${real_dirs}")
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${real_dirs}")
    endif()
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _wheel_python_includes_fix)
