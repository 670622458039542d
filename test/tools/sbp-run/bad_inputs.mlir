// RUN: rm -rf %t && mkdir -p %t
// RUN: python -c "import numpy as np, sys; d = sys.argv[1]; np.save(d + '/a.npy', np.ones((2, 4), np.float32)); np.save(d + '/a64.npy', np.ones((2, 4))); np.save(d + '/short.npy', np.ones((2, 3), np.float32)); open(d + '/junk.npy', 'w').write('junk')" %t
// RUN: sbp-run %s --pipeline "" --inputs %t/a.npy,%t/a.npy --check | filecheck %s --check-prefix=OK
// RUN: not sbp-run %s --pipeline "" --inputs %t/a.npy,%t/a64.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not sbp-run %s --pipeline "" --inputs %t/short.npy,%t/a.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not sbp-run %s --pipeline "" --inputs %t/a.npy 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not sbp-run %s --pipeline "" --inputs %t/a.npy,%t/missing.npy 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not sbp-run %s --pipeline "" --inputs %t/a.npy,%t/junk.npy 2>&1 | filecheck %s --check-prefix=JUNK

// --inputs: one .npy file per argument, with the argument's global shape and dtype; a file that does
// not fit is reported at the argument.

sbp.placement @p "cpu" [0, 1]
func.func @main(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>,
                %t2: !sbp.tensor<2x4xf32, @p, [S(0)]>) -> !sbp.tensor<2x4xf32, @p, [S(0)]> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(0)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
  func.return %t3 : !sbp.tensor<2x4xf32, @p, [S(0)]>
}

// OK:      {{^}}total bytes sent: 0 (all ranks); cost model: 0{{$}}
// OK-NEXT: {{^}}check: OK ({{.*}}){{$}}

// DTYPE:      bad_inputs.mlir:15:17: error: input 1 ({{.*}}a64.npy) has shape [2, 4] and dtype float64, but argument 1 of @main is f32[2,4] (shape [2, 4], dtype float32){{$}}
// DTYPE-NEXT: {{^}}                %t2: !sbp.tensor<2x4xf32, @p, [S(0)]>) -> !sbp.tensor<2x4xf32, @p, [S(0)]> {{[{]}}{{$}}
// DTYPE-NEXT: {{^}}                ^^^{{$}}
// DTYPE-NOT:  Traceback

// SHAPE:      bad_inputs.mlir:14:17: error: input 0 ({{.*}}short.npy) has shape [2, 3] and dtype float32, but argument 0 of @main is f32[2,4]
// SHAPE-NEXT: {{^}}func.func @main(%t1:

// COUNT: bad_inputs.mlir:14:17: error: --inputs gives 1 file but @main takes 2 arguments{{$}}

// MISSING: {{^}}error: cannot read input {{.*}}missing.npy: [Errno 2] No such file or directory

// JUNK: {{^}}error: cannot read input {{.*}}junk.npy: {{.+}}
