"""One GPU, one check: the run is given a CUDA device and the driver answers for it.

It asks the CUDA driver API (libcuda, which the NVIDIA runtime mounts into a pod granted
nvidia.com/gpu) through ctypes, so the check needs nothing installed beyond Python. Exit 0
prints each visible device; exit 3 says none is visible, which `tau run status` reports as
the application's failure: the pod started, but the node or its device plugin gave it no GPU.
"""

from __future__ import annotations

import ctypes
import sys


def devices() -> list[tuple[str, int]]:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return []
    if cuda.cuInit(0) != 0:
        return []
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return []
    found = []
    for index in range(count.value):
        device = ctypes.c_int(0)
        cuda.cuDeviceGet(ctypes.byref(device), index)
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, len(name), device)
        memory = ctypes.c_size_t(0)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), device)
        found.append((name.value.decode(errors="replace"), memory.value))
    return found


def main() -> int:
    visible = devices()
    if not visible:
        print("no CUDA device is visible to this pod (check nvidia.com/gpu on the node)")
        return 3
    for index, (name, memory) in enumerate(visible):
        print(f"cuda:{index} {name} {memory // 2**20} MiB")
    print("gpu quickstart: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
