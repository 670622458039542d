"""Running emitted kernels on the CPU: the g++ shim (`shim/`, `host_shim/`), the runner, the roofline."""
