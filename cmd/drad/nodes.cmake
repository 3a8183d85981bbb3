# Included from cmd/drad/CMakeLists.txt: what drad's simulated nodes
# (nodes.c, children.c) need: the node agent, GPU discovery for
# --real-gpus and the fake driver roots, and the programs and data they
# start or read, found at run time next to drad or, in a build tree,
# where these paths say.
target_link_libraries(drad PRIVATE dra_node dra_gpu dra_plugin dra_cluster)
target_compile_definitions(drad PRIVATE
  DRAD_SHARE_DIR="${CMAKE_SOURCE_DIR}/share/dra"
  DRAD_DEPLOY_DIR="${CMAKE_SOURCE_DIR}/deploy"
  DRAD_GPU_PLUGIN="$<TARGET_FILE:dra-gpu-plugin>"
  DRAD_FAKE_NVML="$<TARGET_FILE:dra_fake_nvml>"
  DRAD_FAKE_SMI="$<TARGET_FILE:dra_fake_smi>")
add_dependencies(drad dra-gpu-plugin dra_fake_nvml dra_fake_smi dra-shim)
