# CMake generated Testfile for 
# Source directory: /work/main/tests/base
# Build directory: /work/main/build/tests/base
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[test_base]=] "/work/main/build/tests/base/test_base")
set_tests_properties([=[test_base]=] PROPERTIES  TIMEOUT "300" _BACKTRACE_TRIPLES "/work/main/cmake/dra.cmake;59;add_test;/work/main/tests/base/CMakeLists.txt;1;dra_test;/work/main/tests/base/CMakeLists.txt;0;")
