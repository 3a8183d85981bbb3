file(REMOVE_RECURSE
  "CMakeFiles/dra_base.dir/arena.c.o"
  "CMakeFiles/dra_base.dir/arena.c.o.d"
  "CMakeFiles/dra_base.dir/buf.c.o"
  "CMakeFiles/dra_base.dir/buf.c.o.d"
  "CMakeFiles/dra_base.dir/diag.c.o"
  "CMakeFiles/dra_base.dir/diag.c.o.d"
  "CMakeFiles/dra_base.dir/err.c.o"
  "CMakeFiles/dra_base.dir/err.c.o.d"
  "CMakeFiles/dra_base.dir/map.c.o"
  "CMakeFiles/dra_base.dir/map.c.o.d"
  "CMakeFiles/dra_base.dir/mem.c.o"
  "CMakeFiles/dra_base.dir/mem.c.o.d"
  "CMakeFiles/dra_base.dir/path.c.o"
  "CMakeFiles/dra_base.dir/path.c.o.d"
  "libdra_base.a"
  "libdra_base.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/dra_base.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
