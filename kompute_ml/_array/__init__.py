"""The Array's internals: dtypes, fusion (trace, generate, run), indexing, reductions and linear
algebra. They take Buffers, shapes and dtypes and return (Buffer, shape, dtype); only array.py
constructs Arrays."""
