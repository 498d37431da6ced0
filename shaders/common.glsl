// common.glsl — helpers shared by the built-in kernels (#include "common.glsl").
#ifndef KOMPUTE_ML_COMMON_GLSL
#define KOMPUTE_ML_COMMON_GLSL

// Linear invocation index of a 1-D kernel. The stream layer turns a grid of more than
// maxComputeWorkGroupCount.x groups into a 2-D grid, so y counts whole rows of x groups.
// A macro, not a function: gl_WorkGroupSize read in a function defined before the shader's
// `layout(local_size_x = ...) in;` line is (1, 1, 1) in glslang; the macro expands at the use.
#define km_global_index() \
    (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x)

#endif
