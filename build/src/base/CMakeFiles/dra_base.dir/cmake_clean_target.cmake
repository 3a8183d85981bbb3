file(REMOVE_RECURSE
  "libdra_base.a"
)
