"""``numba.cuda.api``: the module numba.cuda defines its host API in (``to_device``,
``device_array``, ``stream``, ``select_device``, ``is_fp8_supported``...), for code that
imports from it.  Every name is cujit's own object, the same as ``cujit.<name>``."""
from .arrays import (as_cuda_array, device_array, device_array_like, from_cuda_array_interface,
                     is_cuda_array, managed_array, mapped, mapped_array, mapped_array_like,
                     open_ipc_array, pinned, pinned_array, pinned_array_like, to_device)
from .profiler import profile_start, profile_stop, profiling
from .runtime.api import (default_stream, event, external_stream, is_bfloat16_supported,
                          is_float16_supported, is_fp8_supported, legacy_default_stream,
                          per_thread_default_stream, require_context, stream)
from .runtime.device_list import detect, gpus, list_devices
from .runtime.devices import (close, current_context, defer_cleanup, get_current_device,
                              select_device, synchronize)
from .runtime.streams import event_elapsed_time

__all__ = ["as_cuda_array", "device_array", "device_array_like", "from_cuda_array_interface",
           "is_cuda_array", "managed_array", "mapped", "mapped_array", "mapped_array_like",
           "open_ipc_array", "pinned", "pinned_array", "pinned_array_like", "to_device",
           "profile_start", "profile_stop", "profiling", "default_stream", "event",
           "external_stream", "is_bfloat16_supported", "is_float16_supported",
           "is_fp8_supported", "legacy_default_stream", "per_thread_default_stream",
           "require_context", "stream", "detect", "gpus", "list_devices", "close",
           "current_context", "defer_cleanup", "get_current_device", "select_device",
           "synchronize", "event_elapsed_time"]
