# SPDX-License-Identifier: BSD-3-Clause
# Writes OUT (a Python module) with the commit the sources are at, "<short hash>" or
# "<short hash>-dirty" when tracked files differ from it, or None outside a git checkout. Run at
# every build (src/python/CMakeLists.txt), so an incremental build never keeps an older commit.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rc)
if(rc EQUAL 0 AND commit)
  execute_process(COMMAND git status --porcelain --untracked-files=no
                  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    string(APPEND commit "-dirty")
  endif()
  set(value "\"${commit}\"")
else()
  set(value "None")
endif()
set(text "# Generated at build time by cmake/write_build_commit.cmake.\nCOMMIT = ${value}\n")
# Rewritten only when it changes, so that nothing depending on it rebuilds needlessly.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
