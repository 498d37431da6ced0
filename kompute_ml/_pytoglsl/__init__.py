"""python2shader's translator, one module per stage: types → nodes → ops/builtins → exprs → typed
(the typed tree) → glsl (GLSL text); translate.py drives them for one Python function."""
