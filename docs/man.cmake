# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a man page (cmake -P): SRC with its @VARIABLES@ replaced, the line
# `.\" {{plugins}}` replaced by what the built plugins say about themselves
# (sluice --describe-all --format=man) and the line `.\" {{plugin-list}}` by
# the list of them (sluice --list-plugins), so the pages name every plugin
# and option of this build and cannot go stale.
foreach(v SLUICE BUILD_PLUGIN_DIR SRC DST)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "man.cmake: -D${v}= missing")
  endif()
endforeach()
set(ENV{SLUICE_PLUGIN_PATH} "${BUILD_PLUGIN_DIR}")

function(run_sluice out)
  execute_process(COMMAND "${SLUICE}" ${ARGN}
    OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR text STREQUAL "")
    message(FATAL_ERROR "${SLUICE} ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

file(READ "${SRC}" page)
string(CONFIGURE "${page}" page @ONLY)

set(marker ".\\\" {{plugins}}\n")
string(FIND "${page}" "${marker}" at)
if(at GREATER_EQUAL 0)
  run_sluice(plugins --describe-all --format=man)
  string(REPLACE "${marker}" "${plugins}" page "${page}")
endif()

set(marker ".\\\" {{plugin-list}}\n")
string(FIND "${page}" "${marker}" at)
if(at GREATER_EQUAL 0)
  run_sluice(list --list-plugins)
  # "name kind description" lines -> .TP entries (troff: - is \-).
  string(REPLACE "\\" "\\e" list "${list}")
  string(REPLACE "-" "\\-" list "${list}")
  string(REGEX REPLACE "([^ \n]+) +([^ \n]+) +([^\n]*)\n" ".TP\n.B \\1\n(\\2) \\3\n"
         list "${list}")
  string(REPLACE "${marker}" "${list}" page "${page}")
endif()

string(FIND "${page}" "{{" at)
if(at GREATER_EQUAL 0)
  message(FATAL_ERROR "${SRC}: a {{marker}} is left that man.cmake does not know")
endif()
file(WRITE "${DST}.tmp" "${page}")
file(RENAME "${DST}.tmp" "${DST}")
