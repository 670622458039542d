"""The Ascend C backend: fmod ops -> kernel IR with tiling, the C++ printer, the CANN project."""
