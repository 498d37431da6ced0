"""Vulkan devices: which exist, which one a call uses (the implementation is _runtime/device.py)."""

from ._runtime.device import Device, DeviceInfo, devices, get_device, use_device

__all__ = ["DeviceInfo", "Device", "devices", "get_device", "use_device"]
