"""pyshader's API on every Python: write compute shaders as Python functions.

pyshader (the package) translated CPython bytecode and fails on Python 3.11; this module offers
the same names and signature style, translated through the ``ast`` module to GLSL and compiled
with glslang. Code written for pyshader runs with only its import changed::

    from kompute_ml.pyshader import python2shader, f32, ivec3, Array

    @python2shader
    def compute_shader_multiply(index=("input", "GlobalInvocationId", ivec3),
                                data1=("buffer", 0, Array(f32)),
                                data2=("buffer", 1, Array(f32)),
                                data3=("buffer", 2, Array(f32))):
        i = index.x
        data3[i] = data1[i] * data2[i]

    spirv = compute_shader_multiply.to_spirv()      # bytes for kp.Manager.algorithm
    print(compute_shader_multiply.to_glsl())        # the generated GLSL

Parameters describe the shader's resources as ``(kind, slot, type)``, as a default value or an
annotation: ``("input", "GlobalInvocationId", ivec3)``, ``("buffer", binding, Array(f32))``,
``("uniform", binding, T)``, and (kompute_ml's addition; pyshader had none)
``("push_constant", position, T)`` — every push-constant parameter is one member of the shader's
push-constant block, ordered by position. See docs/shaders.md for the language.
"""

from ._pytoglsl import array_stride, translate, translation_error
from ._pytoglsl.types import (Aggregate, Array, Composite, Float, Int, Matrix, Numeric, Scalar,
                              ShaderType, Struct, Vector, boolean, bvec2, bvec3, bvec4, f16, f32,
                              f64, i16, i32, i64, ivec2, ivec3, ivec4, mat2, mat2x2, mat2x3, mat2x4,
                              mat3, mat3x2, mat3x3, mat3x4, mat4, mat4x2, mat4x3, mat4x4,
                              type_from_name, u8, u32, uvec2, uvec3, uvec4, vec2, vec3, vec4, void)
from .errors import ShaderCompileError, TranslationError

__all__ = [
    "python2shader", "ShaderModule", "TranslationError", "ShaderError", "type_from_name",
    "ShaderType", "Scalar", "Numeric", "Float", "Int", "Composite", "Aggregate",
    "Vector", "Matrix", "Array", "Struct",
    "void", "boolean", "f16", "f32", "f64", "u8", "i16", "i32", "i64", "u32",
    "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4",
    "bvec2", "bvec3", "bvec4", "mat2", "mat3", "mat4",
    "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2", "mat4x3", "mat4x4",
    "RES_INPUT", "RES_OUTPUT", "RES_UNIFORM", "RES_BUFFER", "RES_SAMPLER", "RES_TEXTURE",
    "RES_PUSH_CONSTANT",
]

# pyshader's name for its translation errors, so that ``except pyshader.ShaderError`` still works
ShaderError = TranslationError

RES_INPUT, RES_OUTPUT, RES_UNIFORM, RES_BUFFER = "input", "output", "uniform", "buffer"
RES_SAMPLER, RES_TEXTURE, RES_PUSH_CONSTANT = "sampler", "texture", "push_constant"


class ShaderModule:
    """A compute shader translated from a Python function by :func:`python2shader`.

    Attributes
    ----------
    input : function
        The Python function it was made from (as in pyshader).
    name : str
        The function's name.
    local_size : tuple of 3 ints
        The workgroup size.
    resources : dict
        Parameter name -> ``(kind, slot, type)``, as declared.
    """

    def __init__(self, func, shader):
        self._func = func
        self._shader = shader
        self._spirv = None
        self.name = shader.name
        self.local_size = shader.local_size
        self.resources = {r.name: (r.kind, r.slot, r.type) for r in shader.resources}
        # len(x) of a runtime array reads specialization constant i (see _pytoglsl/glsl.py):
        # (spec id, binding, element stride in bytes) for kompute_ml.Kernel to fill in
        self.length_constants = tuple((sid, r.slot, array_stride(r.type.subtype))
                                      for sid, r in shader.length_specs)

    @property
    def input(self):
        """The Python function this shader was translated from."""
        return self._func

    @property
    def description(self):
        return f"shader from {self.name}"

    def __repr__(self):
        return f"<ShaderModule {self.description} at 0x{id(self):x}>"

    def to_glsl(self):
        """The generated GLSL 450 source (str)."""
        return self._shader.glsl

    def to_spirv(self):
        """The SPIR-V module (bytes), as ``kp.Manager.algorithm`` takes it; compiled once."""
        if self._spirv is None:
            from ._compile import glslang as _glslang
            try:
                self._spirv = _glslang.compile_glsl(self._shader.glsl,
                                                    filename=f"<python2shader {self.name}>")
            except ShaderCompileError as exc:
                numbered = "\n".join(f"{i:4d}  {line}" for i, line in
                                     enumerate(self._shader.glsl.splitlines(), 1))
                raise translation_error(
                    self.name, self._shader.filename, self._shader.lineno,
                    "this function: the generated GLSL does not compile (a bug in "
                    f"python2shader; please report it).\n{exc}\nGenerated GLSL:\n{numbered}"
                ) from exc
        return self._spirv

    def to_kernel(self):
        """A :class:`kompute_ml.Kernel` running this shader on kompute_ml arrays."""
        from .kernel import Kernel
        return Kernel(self)


def python2shader(func=None, *, local_size=(1, 1, 1)):
    """Translate a Python function into a compute shader (a :class:`ShaderModule`).

    Parameters
    ----------
    func : function
        Its parameters describe the shader's resources (see the module docstring); its body
        uses the subset of Python that docs/shaders.md lists.
    local_size : int or tuple of 1 to 3 ints, default=(1, 1, 1)
        The workgroup size. The default, as with pyshader, keeps ``kp``'s default dispatch
        (one workgroup per element of the first tensor) correct. Larger groups are faster on a
        GPU; the kernel should then guard its index against the array length.

    Returns
    -------
    ShaderModule

    Raises
    ------
    TranslationError
        Something in the function has no shader equivalent; the message names the function,
        the file and line, and the construct.

    Examples
    --------
    >>> from kompute_ml.pyshader import python2shader, f32, ivec3, Array
    >>> @python2shader
    ... def double(index=("input", "GlobalInvocationId", ivec3),
    ...            data=("buffer", 0, Array(f32))):
    ...     data[index.x] = data[index.x] * 2.0
    >>> print(double.to_glsl().splitlines()[-2])
        data[index.x] = data[index.x] * 2.0;
    >>> double.to_spirv()[:4] == bytes.fromhex("03022307")
    True
    """
    if func is None:
        return lambda f: python2shader(f, local_size=local_size)
    return ShaderModule(func, translate(func, local_size))
