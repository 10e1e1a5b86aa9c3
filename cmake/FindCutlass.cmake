# SPDX-License-Identifier: BSD-3-Clause
# Finds the CUTLASS 4.2 C++ headers. Looked for, in order:
#   1. -DCUTLASS_DIR=<root> or $CUTLASS_DIR (a CUTLASS checkout or the wheel's source/ folder),
#   2. third_party/cutlass (filled by scripts/fetch-cutlass.sh; how the headers travel to the GPU box),
#   3. the nvidia-cutlass==4.2.0.0 wheel of the python3 on PATH (pip install --no-deps).
# Defines the imported target Cutlass::Cutlass (include + tools/util/include).

set(_coda_cutlass_hints "")
if(CUTLASS_DIR)
  list(APPEND _coda_cutlass_hints "${CUTLASS_DIR}")
elseif(DEFINED ENV{CUTLASS_DIR})
  list(APPEND _coda_cutlass_hints "$ENV{CUTLASS_DIR}")
endif()
list(APPEND _coda_cutlass_hints "${PROJECT_SOURCE_DIR}/third_party/cutlass")
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
      "import importlib.util, os; s = importlib.util.find_spec('cutlass_library'); print(os.path.join(list(s.submodule_search_locations)[0], 'source') if s else '')"
    OUTPUT_VARIABLE _coda_wheel_root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_coda_wheel_root)
    list(APPEND _coda_cutlass_hints "${_coda_wheel_root}")
  endif()
endif()

set(Cutlass_ROOT_DIR "")
foreach(_root IN LISTS _coda_cutlass_hints)
  if(EXISTS "${_root}/include/cutlass/version.h")
    set(Cutlass_ROOT_DIR "${_root}")
    break()
  endif()
endforeach()

if(NOT Cutlass_ROOT_DIR)
  message(FATAL_ERROR
    "CUTLASS 4.2 headers not found (looked in: ${_coda_cutlass_hints}).\n"
    "Install them with:  python3 -m pip install --no-deps nvidia-cutlass==4.2.0.0\n"
    "or run scripts/fetch-cutlass.sh, or pass -DCUTLASS_DIR=<cutlass root>.")
endif()

file(STRINGS "${Cutlass_ROOT_DIR}/include/cutlass/version.h" _major REGEX "#define CUTLASS_MAJOR ")
file(STRINGS "${Cutlass_ROOT_DIR}/include/cutlass/version.h" _minor REGEX "#define CUTLASS_MINOR ")
string(REGEX REPLACE ".*CUTLASS_MAJOR ([0-9]+).*" "\\1" _major "${_major}")
string(REGEX REPLACE ".*CUTLASS_MINOR ([0-9]+).*" "\\1" _minor "${_minor}")
set(Cutlass_VERSION "${_major}.${_minor}")
if(NOT Cutlass_VERSION VERSION_EQUAL 4.2)
  message(FATAL_ERROR "CUTLASS at ${Cutlass_ROOT_DIR} is version ${Cutlass_VERSION}; CODA needs 4.2 "
                      "(pip install --no-deps nvidia-cutlass==4.2.0.0).")
endif()
foreach(_needed include/cutlass/epilogue/fusion/sm90_visitor_store_tma_warpspecialized.hpp
                tools/util/include/cutlass/util/device_memory.h)
  if(NOT EXISTS "${Cutlass_ROOT_DIR}/${_needed}")
    message(FATAL_ERROR "CUTLASS at ${Cutlass_ROOT_DIR} lacks ${_needed}: incomplete install.")
  endif()
endforeach()

message(STATUS "CUTLASS ${Cutlass_VERSION} headers: ${Cutlass_ROOT_DIR}")
add_library(Cutlass::Cutlass INTERFACE IMPORTED)
target_include_directories(Cutlass::Cutlass SYSTEM INTERFACE
  "${Cutlass_ROOT_DIR}/include" "${Cutlass_ROOT_DIR}/tools/util/include")
set(Cutlass_FOUND TRUE)
