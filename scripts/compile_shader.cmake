# compile_shader.cmake — one GLSL compute shader to SPIR-V at build time (CMakeLists.txt runs it):
#   cmake -DSRC=a.comp -DOUT=a.spv -DINC=shaders -DGLSLANG=glslangValidator [-DSPIRV_VAL=spirv-val] -P compile_shader.cmake
# glslangValidator refuses #include unless the source enables GL_GOOGLE_include_directive; the
# run-time compiler (kompute_ml/_glslang.py) expands includes itself and needs no such line. So the
# line is added here after #version when missing, with #line keeping the error line numbers true.
file(READ "${SRC}" text)
if(NOT text MATCHES "GL_GOOGLE_include_directive" AND text MATCHES "#include")
  string(REGEX REPLACE "(#version[^\n]*\n)" "\\1#extension GL_GOOGLE_include_directive : require\n#line 2\n" text "${text}")
endif()
get_filename_component(name "${SRC}" NAME)
set(tmp "${OUT}.${name}")
file(WRITE "${tmp}" "${text}")
execute_process(COMMAND "${GLSLANG}" -V --target-env vulkan1.1 -S comp "-I${INC}" -o "${OUT}" "${tmp}"
                RESULT_VARIABLE rv OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rv EQUAL 0)
  message(FATAL_ERROR "glslangValidator failed on ${SRC}:\n${out}")
endif()
if(SPIRV_VAL)
  execute_process(COMMAND "${SPIRV_VAL}" --target-env vulkan1.1 "${OUT}" RESULT_VARIABLE rv
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rv EQUAL 0)
    message(FATAL_ERROR "spirv-val rejects ${OUT} (from ${SRC}):\n${out}")
  endif()
endif()
