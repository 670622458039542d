// RUN: sbp-translate %s --emit-mlir=mpi --seed 2 -o - | filecheck %s
// RUN: not sbp-translate %s --emit-mlir=mpi --pipeline infer-sbp 2>&1 | filecheck %s --check-prefix=ERR

// The per-rank program with its collectives in MLIR 22's mpi dialect (no shard op left): 5 rows on
// 2 ranks, the all-gather puts each rank's 3 or 2 rows (a per-rank table) into a zero 5x6 buffer at
// its offset, and an mpi.allreduce with MPI_BOR (op = 8) of the f32 bits over the mesh axis's
// communicator combines them. @mpi_main checks the world size, cuts the seeded input (a
// dense_resource blob) to each rank's rows, calls @main and prints on rank 0. The module carries
// the MPICH DLTI choice and its lowering pipeline as the mlir_reproducer.
sbp.placement @p "cpu" [0, 1]

// CHECK-NOT:  "shard.
// CHECK:      "func.func"() <{sym_name = "main", function_type = (tensor<?x6xf32>) -> tensor<5x6xf32>
// CHECK:      %[[WORLD:.*]] = "mpi.comm_world"() : () -> !mpi.comm
// CHECK-NEXT: %[[RANK:.*]] = "mpi.comm_rank"(%[[WORLD]]) : (!mpi.comm) -> i32
// CHECK-NEXT: %[[R:.*]] = "arith.index_cast"(%[[RANK]]) : (i32) -> index
// CHECK:      "arith.maximumf"
// CHECK:      %[[OFFSETS:.*]] = "arith.constant"() <{value = dense<[0, 3]> : tensor<2xindex>}>
// CHECK-NEXT: %[[OFFSET:.*]] = "tensor.extract"(%[[OFFSETS]], %[[R]])
// CHECK-NEXT: %[[SIZES:.*]] = "arith.constant"() <{value = dense<[3, 2]> : tensor<2xindex>}>
// CHECK-NEXT: %[[SIZE:.*]] = "tensor.extract"(%[[SIZES]], %[[R]])
// CHECK-NEXT: "tensor.insert_slice"(%{{.*}}, %{{.*}}, %[[OFFSET]], %[[SIZE]]) {{.*}} -> tensor<5x6xf32>
// CHECK:      %[[COMM:.*]] = "mpi.comm_split"(%[[WORLD]], %{{.*}}, %{{.*}}) : (!mpi.comm, i32, i32) -> !mpi.comm
// CHECK:      "arith.bitcast"(%{{.*}}) : (f32) -> i32
// CHECK:      "tensor.collapse_shape"(%{{.*}}) <{reassociation = {{\[\[}}0 : i64, 1 : i64]]}> : (tensor<5x6xi32>) -> tensor<30xi32>
// CHECK:      "mpi.allreduce"(%{{.*}}, %{{.*}}, %[[COMM]]) <{op = 8 : i32}> : (memref<30xi32>, memref<30xi32>, !mpi.comm) -> ()
// CHECK:      "arith.bitcast"(%{{.*}}) : (i32) -> f32
// CHECK:      "func.func"() <{sym_name = "printMemrefF32", function_type = (memref<*xf32>) -> (), sym_visibility = "private"}>
// CHECK:      "func.func"() <{sym_name = "mpi_main", function_type = () -> ()}>
// CHECK-NEXT: "mpi.init"() : () -> ()
// CHECK:      "mpi.allreduce"(%{{.*}}, %{{.*}}, %{{.*}}) <{op = 3 : i32}> : (memref<1xi32>, memref<1xi32>, !mpi.comm) -> ()
// CHECK:      "cf.assert"(%{{.*}}) <{msg = "@mpi_main: the mesh [2] has 2 ranks: run it with mpiexec -n 2"}>
// CHECK:      "arith.constant"() <{value = dense_resource<sbp_input0> : tensor<5x6xf32>}>
// CHECK:      "tensor.extract_slice"({{.*}} : (tensor<5x6xf32>, index, index) -> tensor<?x6xf32>
// CHECK:      "func.call"(%{{.*}}) <{callee = @main}> : (tensor<?x6xf32>) -> tensor<5x6xf32>
// CHECK:      "scf.if"
// CHECK:      "func.call"(%{{.*}}) <{callee = @printMemrefF32}> : (memref<*xf32>) -> ()
// CHECK:      "mpi.finalize"() : () -> ()
// CHECK:      }) {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} : () -> ()
// CHECK:      sbp_input0: "0x04000000{{[0-9a-f]+}}"
// CHECK:      mlir_reproducer: {
// CHECK-NEXT:   pipeline: "builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},{{.*}},convert-to-llvm,reconcile-unrealized-casts)",

// ERR: emit_mpi.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}run spmdize before --emit-mlir
func.func @main(%a: !sbp.tensor<5x6xf32, @p, [S(0)]>) -> !sbp.tensor<5x6xf32, @p, [B]> {
  %0 = sbp.relu %a : !sbp.tensor<5x6xf32, @p, [S(0)]> -> !sbp.tensor<5x6xf32, @p>
  %1 = sbp.to_global %0 : !sbp.tensor<5x6xf32, @p> -> !sbp.tensor<5x6xf32, @p, [B]>
  func.return %1 : !sbp.tensor<5x6xf32, @p, [B]>
}
