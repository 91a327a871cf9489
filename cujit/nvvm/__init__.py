"""The NVVM backend: typed functions lowered to NVVM IR, PTX and cubin."""
