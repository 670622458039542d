// RUN: sbp-run - --check < %s | filecheck %s --check-prefix=STDIN
// RUN: sbp-run --version | filecheck %s --check-prefix=VERSION
// RUN: not sbp-run %s --chek 2>&1 | filecheck %s --check-prefix=SUGGEST
// RUN: not sbp-run %examples/gpt_block.mlir 2>&1 | filecheck %s --check-prefix=FREE
// RUN: sbp-run %examples/gpt_block.mlir --rule global --mem 12.5MiB --check | filecheck %s --check-prefix=RULE
// RUN: not sbp-run %s --mem 1MiB 2>&1 | filecheck %s --check-prefix=MEM
// RUN: not sbp-run --pipeline infer-sbp{rule=global mem=12.5MiB} %s 2>&1 | filecheck %s --check-prefix=CUT
// RUN: not sbp-run - < /dev/null 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: sbp-run %s --progress 2>&1 >/dev/null | filecheck %s --check-prefix=PROGRESS
// RUN: sbp-run %s 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty

// The command line as a new user tries it: `-` reads stdin; --version; an unknown flag gets "did you
// mean"; an argument without an SBP is named where it is declared, with the --rule global shortcut
// (a size with a unit needs no quotes in --mem); a pipeline the shell cut at a space says to quote
// it; an empty input has no function to run; --progress shows each step on stderr, and without it
// (stderr not a terminal) nothing is printed there.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.neg %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// STDIN: {{^}}check: OK
// VERSION: {{^}}sbp-run (sbpc) {{[0-9]+\.[0-9]+\.[0-9]+}}, built on xdsl {{[0-9]+\.[0-9]+\.[0-9]+}}{{$}}
// SUGGEST: {{^}}sbp-run: error: unrecognized arguments: --chek (did you mean --check?){{$}}
// FREE:      gpt_block.mlir:17:16: error: func.func @main: argument 1 (f32[256][?] @mesh) has no SBP; give %ln1_g one, or let rule=global decide it (sbp-opt -p 'infer-sbp{rule=global}'; sbp-run --rule global, i.e. --pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize'){{$}}
// FREE-NEXT: {{^}}               %ln1_g: !sbp.tensor<256xf32, @mesh>,{{$}}
// FREE-NEXT: {{^}}               ^^^^^^{{$}}
// RULE: {{^}}check: OK
// MEM: {{^}}error: --mem is the budget of --rule global (give --rule global){{$}}
// CUT: sbp-run: error: unrecognized arguments: {{.*}}command_line.mlir (a pass pipeline with a space in it is cut there by the shell: quote it, --pipeline 'infer-sbp{rule=global mem=12.5MiB}'){{$}}
// EMPTY: {{^}}<stdin>:1:1: error: the program has no function to run (sbp-run runs @main; see --entry){{$}}
// PROGRESS:      {{^}}sbp-run: running @main on 2 ranks (simulator)...{{$}}
// PROGRESS-NEXT: {{^}}sbp-run: infer-sbp on @main... done in {{[0-9.]+}} s{{$}}
// PROGRESS:      {{^}}sbp-run: spmdize on @main... done in {{[0-9.]+}} s{{$}}
// PROGRESS-NEXT: {{^}}sbp-run: running @main on 2 ranks (simulator)... done in {{[0-9.]+}} s{{$}}
// QUIET-NOT: {{.}}
