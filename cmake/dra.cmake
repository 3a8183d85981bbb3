# Shared build settings and helpers for every dra target.

set(DRA_WARNINGS -Wall -Wextra -Wshadow -Wundef -Wwrite-strings
    -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter)
if(DRA_WERROR)
  list(APPEND DRA_WARNINGS -Werror)
endif()
add_compile_options(${DRA_WARNINGS})
add_compile_options(-fvisibility=hidden)

if(DRA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

if(DRA_TSAN)
  if(DRA_SANITIZE)
    message(FATAL_ERROR "DRA_TSAN and DRA_SANITIZE exclude each other")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

if(DRA_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DRA_FUZZ needs clang (libFuzzer)")
  endif()
  # Library code gets coverage instrumentation; fuzz/ links the driver.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(DRA_VALGRIND)
  find_program(VALGRIND valgrind REQUIRED)
  set(DRA_TEST_LAUNCHER ${VALGRIND} --error-exitcode=99 --leak-check=full
      --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
      --track-fds=no --quiet)
else()
  set(DRA_TEST_LAUNCHER)
endif()

# dra_module(NAME SOURCES... [DEPS targets...])
#   A module library dra_NAME with include/ public and src/NAME private.
function(dra_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(dra_${name} STATIC ${M_SOURCES})
  target_include_directories(dra_${name}
    PUBLIC ${CMAKE_SOURCE_DIR}/include
    PRIVATE ${CMAKE_SOURCE_DIR}/src/${name})
  target_link_libraries(dra_${name} PUBLIC ${M_DEPS})
endfunction()

# dra_test(NAME SOURCES... [LIBS ...] [ARGS ...] [NOVALGRIND] [TIMEOUT s])
#   A cmocka test binary registered with CTest; under DRA_VALGRIND it runs
#   inside memcheck unless NOVALGRIND (scripts that drive node, say).
function(dra_test name)
  cmake_parse_arguments(T "NOVALGRIND" "TIMEOUT" "SOURCES;LIBS;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/include
                             ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_compile_definitions(${name} PRIVATE
    DRA_SOURCE_DIR="${CMAKE_SOURCE_DIR}" DRA_TEST_DATA="${CMAKE_SOURCE_DIR}/tests/data")
  if(T_NOVALGRIND)
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  else()
    add_test(NAME ${name} COMMAND ${DRA_TEST_LAUNCHER} $<TARGET_FILE:${name}> ${T_ARGS})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
endfunction()

# dra_script_test(NAME COMMAND ... [TIMEOUT s]): a test that runs a program
# or script (no valgrind wrapping; the script wraps what it runs itself
# through $DRA_TEST_LAUNCHER when it wants to).
function(dra_script_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  string(REPLACE ";" " " launcher "${DRA_TEST_LAUNCHER}")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "DRA_TEST_LAUNCHER=${launcher};DRA_SOURCE_DIR=${CMAKE_SOURCE_DIR};DRA_BUILD_DIR=${CMAKE_BINARY_DIR}")
endfunction()
