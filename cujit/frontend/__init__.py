"""The front end: a kernel's Python source or bytecode, typed."""
