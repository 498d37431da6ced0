"""Layer 1, compile: GLSL → SPIR-V (glslang.py, in-process with a disk cache) and SPIR-V checks and
reflection (spirv.py). Knows no device."""
