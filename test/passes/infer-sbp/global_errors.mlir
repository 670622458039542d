// RUN: sbp-opt %s | sbp-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: not sbp-opt %s -p "infer-sbp{rule=cost}" 2>&1 | filecheck %s --check-prefix=COST
// RUN: not sbp-opt %s -p "infer-sbp" 2>&1 | filecheck %s --check-prefix=COST
// RUN: not sbp-opt %s -p "infer-sbp{rule=global mem=10KiB}" 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=12KiB}" | filecheck %s --check-prefix=FITS
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=12KiB}" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=FITREPORT
// RUN: not sbp-opt %s -p "infer-sbp{rule=cost mem=1MiB}" 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not sbp-opt %s -p "infer-sbp{rule=global mem=64MB}" 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not sbp-opt %S/Inputs/global_bad_pattern.mlir 2>&1 | filecheck %s --check-prefix=LENGTH

// Free arguments: `?` entries and SBP-less argument types parse, print and round-trip; only
// rule=global takes them; a budget no plan fits names the smallest that does; `mem` is an option
// of rule=global only, checked before the input is read.

// ROUNDTRIP: func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), ?]>, %w: !sbp.tensor<64x64xf32, @m>) -> !sbp.tensor<64x64xf32, @m>

// COST: global_errors.mlir:[[# @LINE + 13]]:1: error: func.func @f: argument 0 (f32[64,64][S(0), ?] @m) has `?` entries; only rule=global decides free arguments

// SMALL: global_errors.mlir:[[# @LINE + 11]]:1: error: func.func @f: mem=10240 bytes (10.0 KiB) is too small; the smallest budget this function fits is 12288 bytes (12.0 KiB)

// Two plans tie at the optimum within 12 KiB (w split like x or transposed): either is right.
// FITS: func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), S(0)]>, %w: !sbp.tensor<64x64xf32, @m, [[[W:S\(0\), S\(0\)|S\(1\), S\(1\)]]]>) -> !sbp.tensor<64x64xf32, @m, [{{S\(0\), S\(0\)|S\(1\), S\(1\)}}]>
// FITREPORT: global: objective 8.660 us = compute 0.120 us + communication 8.540 us; memory 12288 bytes (12.0 KiB) per device, budget 12288 bytes (12.0 KiB)
// FITREPORT-NEXT: global: solver {{.*}}; lower bound 8.660 us, gap 0.0000 %
// OPTION: error: pass 'infer-sbp': mem=1MiB is an option of rule=global only (rule=cost)
// SIZE: error: pass 'infer-sbp': mem=64MB is not a size (write bytes, or a number with KiB, MiB or GiB)
// LENGTH: global_bad_pattern.mlir:3:{{[0-9]+}}: error: {{.*}}argument 0 has ND-SBP [S(0), ?, B] of length 3, but placement @m has hierarchy [2, 2] of rank 2

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), ?]>, %w: !sbp.tensor<64x64xf32, @m>) -> !sbp.tensor<64x64xf32, @m> {
  %y = sbp.matmul %x, %w : !sbp.tensor<64x64xf32, @m, [S(0), ?]>, !sbp.tensor<64x64xf32, @m> -> !sbp.tensor<64x64xf32, @m>
  func.return %y : !sbp.tensor<64x64xf32, @m>
}
