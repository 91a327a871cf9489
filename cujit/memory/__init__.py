"""The memory layer: pointers, the pending-deallocations queue and the EMM memory managers.

See :mod:`cujit.memory.pointers`, :mod:`cujit.memory.deallocations`,
:mod:`cujit.memory.managers` and :mod:`cujit.memory.pool`.
"""
from .pointers import (MemoryPointer, AutoFreePointer, OwnedPointer, MappedMemory,  # noqa: F401
                       PinnedMemory, ManagedMemory, MemoryInfo, IpcHandle, DeadMemoryError)
from .deallocations import PendingDeallocs, DeallocationWarning  # noqa: F401
from .managers import (BaseCUDAMemoryManager, HostOnlyCUDAMemoryManager,  # noqa: F401
                       GetIpcHandleMixin, NumbaCUDAMemoryManager, set_memory_manager,
                       MemoryStats, MemoryManagerError)
from .pool import PoolMemoryManager  # noqa: F401

__all__ = ["MemoryPointer", "AutoFreePointer", "OwnedPointer", "MappedMemory", "PinnedMemory",
           "ManagedMemory", "MemoryInfo", "IpcHandle", "DeadMemoryError", "PendingDeallocs",
           "DeallocationWarning", "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager",
           "GetIpcHandleMixin", "NumbaCUDAMemoryManager", "PoolMemoryManager",
           "set_memory_manager", "MemoryStats", "MemoryManagerError"]
