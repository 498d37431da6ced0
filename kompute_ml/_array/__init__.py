"""The Array's internals: dtypes, buffers, fusion (trace, cache, run) and its GLSL codegen,
indexing, reductions and linear algebra. They take Buffers, shapes and dtypes (and fusion Nodes)
and return (Buffer, shape, dtype); they never import array.py, which alone constructs Arrays."""
