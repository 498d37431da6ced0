"""Layers 2-4, the runtime: vulkan.py (loader enumeration), device.py (the device in use), kp.py (the
only module that imports kp), memory.py (pool), staging.py (the bounded staging ring), stream.py (recording, submit, replay),
program.py (built-in shaders)."""
