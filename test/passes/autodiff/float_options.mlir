// RUN: sbp-opt %s -p 'autodiff{optimizer=adamw lr=2.5E-3 eps=1e-08 beta2=9.99e-1 weight-decay=1e-2}' | filecheck %s
// RUN: sbp-opt %s -p 'autodiff{optimizer=adamw lr=0.0025 eps=0.00000001 beta2=0.999 weight-decay=0.01}' | filecheck %s
// RUN: sbp-opt %s -p 'builtin.module(autodiff{optimizer=adamw lr=25e-4 eps=1E-8 beta2=+999e-3 weight-decay=.01})' | filecheck %s
// RUN: sbp-opt %s -p 'autodiff{optimizer=sgd lr=2}' | filecheck %s --check-prefix=INT
// RUN: sbp-opt %s -p 'autodiff,infer-sbp{rule=global time-limit=6e1}' | filecheck %s --check-prefix=LIMIT
// RUN: not sbp-opt %s -p 'autodiff{optimizer=adamw eps=-1e-3}' 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not sbp-opt %s -p 'autodiff{optimizer=adamw eps=1e-3x}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not sbp-opt %s -p 'autodiff{optimizer=adamw lr=1.5.3}' 2>&1 | filecheck %s --check-prefix=DOTS
// RUN: not sbp-opt %s -p 'autodiff{optimizer=adamw eps=1e-08' 2>&1 | filecheck %s --check-prefix=OPEN

// Float options of a pass take scientific notation (xDSL's pipeline lexer alone reads `1e-08` as a
// name and splits `-1e-3`): the three pipelines above give the same step; an int is a float too. A value
// that is not a number is an error pointing at it, and a syntax error points into the text as written.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4x4xf32, @p, [S(0)]>, %w: !sbp.tensor<4x4xf32, @p, [B]>) -> !sbp.tensor<f32, @p> {
  %h = sbp.matmul %x, %w : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [B]> -> !sbp.tensor<4x4xf32, @p>
  %l = sbp.reduce_sum %h {axes = array<i64: 0, 1>} : !sbp.tensor<4x4xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %l : !sbp.tensor<f32, @p>
}

// CHECK: sbp.train_step = {optimizer = "adamw", params = array<i64: 1>, names = ["w"], state = array<i64: 2, 3>, lr = 2.500000e-03 : f64, weight_decay = 1.000000e-02 : f64, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, step = 1 : i64}
// CHECK: sbp.adamw_update %w, %{{[0-9]+}}, %{{[0-9]+}} {lr = 2.500000e-03 : f64, weight_decay = 1.000000e-02 : f64, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, step = 1 : i64}

// INT: sbp.sgd_update %w, %{{[0-9]+}} {lr = 2.000000e+00 : f64}

// LIMIT: sbp.sgd_update %w, %{{[0-9]+}} {sbp.signature = #sbp.sig<

// NEG: {{^}}error: pass 'autodiff': lr, eps and weight-decay must be >= 0{{$}}

// BAD:      {{^}}error: pass 'autodiff': eps=1e-3x is not a number (write a decimal, e.g. 0.001, 1e-08 or 2.5E+3){{$}}
// BAD-NEXT: {{^}}pass-pipeline:1:30{{$}}
// BAD-NEXT: {{^}}autodiff{optimizer=adamw eps=1e-3x}{{$}}
// BAD-NEXT: {{^}}                             ^^^^^{{$}}
// BAD-NOT:  Traceback

// DOTS:      {{^}}error: pass 'autodiff': lr=1.5.3 is not a number (write a decimal, e.g. 0.001, 1e-08 or 2.5E+3){{$}}
// DOTS-NEXT: {{^}}pass-pipeline:1:29{{$}}

// OPEN:      {{^}}error: bad pass pipeline 'autodiff{optimizer=adamw eps=1e-08' (its '{' is not closed: on a shell line, quote a pipeline that has spaces): Error parsing pass pipeline specification:{{$}}
// OPEN-NEXT: {{^}}pass-pipeline:1:35{{$}}
// OPEN-NEXT: {{^}}autodiff{optimizer=adamw eps=1e-08{{$}}
// OPEN-NEXT: {{^}}                                  ^{{$}}
// OPEN-NEXT: Malformed pass arguments, expected either a space or `}` here
