# Differential test of the CEL engine against @bufbuild/cel
# (scripts/cel-diff.mjs drives tests/cel/cel_diff_driver.c). Always
# registered so it shows up in every run (no ';' in the sh -c line: CMake
# would split it); the script exits 77, counted as
# skipped, when DRA_NODE_TESTS is OFF, node is missing, or npm cannot
# install the oracle. CEL_DIFF_SEED / CEL_DIFF_CASES vary the run.
add_executable(cel_diff_driver ${CMAKE_CURRENT_SOURCE_DIR}/cel_diff_driver.c)
target_include_directories(cel_diff_driver PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(cel_diff_driver PRIVATE dra_cel PkgConfig::JANSSON)
dra_script_test(cel_diff
  COMMAND sh -c "(command -v node >/dev/null 2>&1 || (echo 'cel-diff: skipped: node not found' && exit 77)) && exec node '${CMAKE_SOURCE_DIR}/scripts/cel-diff.mjs' --driver '$<TARGET_FILE:cel_diff_driver>'"
  TIMEOUT 600)
set_tests_properties(cel_diff PROPERTIES SKIP_RETURN_CODE 77
  ENVIRONMENT_MODIFICATION "DRA_NODE_TESTS=set:${DRA_NODE_TESTS}")
