// RUN: sbp-opt %S/Inputs/empty.mlir | filecheck %s --check-prefix=EMPTY
// RUN: sbp-opt < /dev/null | filecheck %s --check-prefix=EMPTY
// RUN: not sbp-opt %s --verison 2>&1 | filecheck %s --check-prefix=SUGGEST
// RUN: not sbp-opt %s -p infer-sbp{rule=global mem=12.5MiB} 2>&1 | filecheck %s --check-prefix=CUT
// RUN: sbp-opt %examples/gpt_block.mlir -p 'infer-sbp{rule=global mem=12.5MiB}' | filecheck %s --check-prefix=MEM
// RUN: sbp-opt %s -p 'infer-sbp{rule=global}' --progress 2>&1 >/dev/null | filecheck %s --check-prefix=PROGRESS
// RUN: sbp-opt %s -p 'infer-sbp{rule=global}' 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty
// RUN: not sbp-opt %s -o '' 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not sbp-opt %s -o %S 2>&1 | filecheck %s --check-prefix=DIR

// An empty input (a file, stdin) is an empty module, as in mlir-opt; an unknown flag gets "did you
// mean"; a pipeline the shell cut at a space says how to quote it; a size with a unit (12.5MiB)
// needs no quotes inside the pipeline; --progress shows each pass on stderr; an output that cannot
// be written is one error line.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4xf32, @p>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.neg %x : !sbp.tensor<4xf32, @p> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// EMPTY:      {{^}}builtin.module {{[{]$}}
// EMPTY-NEXT: {{^[}]$}}
// SUGGEST: {{^}}sbp-opt: error: unrecognized arguments: --verison (did you mean --version?){{$}}
// CUT: {{^}}sbp-opt: error: unrecognized arguments: mem=12.5MiB} (a pass pipeline with a space in it is cut there by the shell: quote it, -p 'infer-sbp{rule=global mem=12.5MiB}'){{$}}
// MEM: sbp.matmul {{.*}}sbp.signature
// PROGRESS: {{^}}sbp-opt: infer-sbp{rule="global"} on @main... done in {{[0-9.]+}} s{{$}}
// NONAME: {{^}}error: -o '': an empty file name (give a file, or '-' for stdout){{$}}
// DIR: {{^}}error: cannot write {{.*}}sbp-opt: Is a directory{{$}}
// QUIET-NOT: {{.}}
