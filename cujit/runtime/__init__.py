"""The runtime layer: devices and their primary contexts (:mod:`.devices`; loaded modules in
:mod:`.modules`), streams and events (:mod:`.streams`), numba.cuda's module-level stream/event
constructors (:mod:`.api`) and CUDA graphs (:mod:`.graphs`).

It sits above ``memory/`` (a Context owns its pending-deallocations queue and memory manager;
memory objects are given their context by the caller) and below ``arrays/`` and the compiler.
The contract the other layers read is public: ``Context.generation``, ``Context.closed``,
``Context.make_current()``, ``Context.stream_handle()`` (docs/interfaces.md).  Nothing is
imported here: ``import cujit`` stays light.
"""
