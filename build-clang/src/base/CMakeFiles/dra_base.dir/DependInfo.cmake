
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/base/arena.c" "src/base/CMakeFiles/dra_base.dir/arena.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/arena.c.o.d"
  "/work/main/src/base/buf.c" "src/base/CMakeFiles/dra_base.dir/buf.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/buf.c.o.d"
  "/work/main/src/base/diag.c" "src/base/CMakeFiles/dra_base.dir/diag.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/diag.c.o.d"
  "/work/main/src/base/err.c" "src/base/CMakeFiles/dra_base.dir/err.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/err.c.o.d"
  "/work/main/src/base/map.c" "src/base/CMakeFiles/dra_base.dir/map.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/map.c.o.d"
  "/work/main/src/base/mem.c" "src/base/CMakeFiles/dra_base.dir/mem.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/mem.c.o.d"
  "/work/main/src/base/path.c" "src/base/CMakeFiles/dra_base.dir/path.c.o" "gcc" "src/base/CMakeFiles/dra_base.dir/path.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
