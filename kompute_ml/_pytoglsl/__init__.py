"""python2shader's translator, one module per stage: types → nodes → ops/builtins → exprs → typed
(the typed tree) → glsl (GLSL text); translate.py drives them for one Python function.

Each module imports only from the stages before it. kompute_ml.pyshader uses the names below.
"""

from .translate import Shader, check_local_size, translate, translation_error
from .types import array_stride

__all__ = ["translate", "translation_error", "check_local_size", "Shader", "array_stride"]
