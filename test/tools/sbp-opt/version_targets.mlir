// RUN: sbp-opt --version | filecheck %s
// RUN: sbp-opt -v | filecheck %s
// RUN: not sbp-opt -t llvm %s 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: sbp-opt --help | filecheck %s --check-prefix=HELP
// RUN: sbp-opt -t mlir %s | filecheck %s --check-prefix=MLIR

// `--version` names sbpc and the xDSL it is built on. Only the MLIR target is offered: xDSL's other
// targets (llvm, riscv-asm, ...) cannot print an sbp program and used to end in a Python exception.

sbp.placement @p "cpu" [0, 1]

// CHECK: {{^}}sbp-opt (sbpc) {{[0-9]+\.[0-9]+\.[0-9]+}}, built on xdsl {{[0-9]+\.[0-9]+\.[0-9]+}}{{$}}
// LLVM: error: argument -t/--target: invalid choice: 'llvm' (choose from 'mlir')
// LLVM-NOT: Traceback
// HELP: [-t {mlir}]
// HELP-NOT: riscv
// MLIR: sbp.placement @p "cpu" [0, 1]
