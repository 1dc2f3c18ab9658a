// Lets a layer with no sources yet still be a library target (see shardflow_layer in CMakeLists.txt).
