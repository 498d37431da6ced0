// common.glsl — helpers shared by the built-in kernels (#include "common.glsl").
#ifndef KOMPUTE_ML_COMMON_GLSL
#define KOMPUTE_ML_COMMON_GLSL

// Linear invocation index of a 1-D kernel. The stream layer turns a grid of more than
// maxComputeWorkGroupCount.x groups into a 2-D grid, so y counts whole rows of x groups.
uint km_global_index() {
    return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
}

#endif
