// RUN: sbp-translate --version | filecheck %s --check-prefix=VERSION
// RUN: not sbp-translate %s --emit-mlr 2>&1 | filecheck %s --check-prefix=SUGGEST
// RUN: not sbp-translate %s --emit-mlir -o '' 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: sbp-translate %s --emit-mlir --progress 2>&1 >/dev/null | filecheck %s --check-prefix=PROGRESS

// --version in sbp-opt's format; an unknown flag is named with the closest one even though the
// required --emit-*/--import-shard is then missing too (argparse alone reports only that).

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.neg %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// VERSION: {{^}}sbp-translate (sbpc) {{[0-9]+\.[0-9]+\.[0-9]+}}, built on xdsl {{[0-9]+\.[0-9]+\.[0-9]+}}{{$}}
// SUGGEST: {{^}}sbp-translate: error: unrecognized arguments: --emit-mlr (did you mean --emit-mlir?){{$}}
// NONAME: {{^}}error: -o '': an empty file name (give a file, or '-' for stdout){{$}}
// PROGRESS: {{^}}sbp-translate: infer-sbp on @main... done in {{[0-9.]+}} s{{$}}
// PROGRESS: {{^}}sbp-translate: spmdize on @main... done in {{[0-9.]+}} s{{$}}
