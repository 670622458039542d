// CPU stand-in for the tiling header the CANN build compiles into an msOpGen kernel.
//
// An msOpGen kernel (op_kernel/<op>.cpp) includes only kernel_operator.h and reads its tiling with
// GET_TILING_DATA(tilingData, tiling): the toolkit generates the tiling struct from the host's
// op_host/<op>_tiling.h (BEGIN_TILING_DATA_DEF ... REGISTER_TILING_DATA_CLASS) and adds it to the
// kernel's compilation, so the kernel never names that header. The shim does the same: the runtime
// names the op's tiling header with -DSBP_OP_TILING_HEADER="<op>_tiling.h" (found on the -I path) and
// this file includes it, so GET_TILING_DATA declares the registered struct. register/tilingdata_base.h
// serves both sides, so host and kernel cannot disagree on the layout. Without the macro nothing is
// included (a hand-written kernel includes its tiling header itself).
#ifndef SBP_SHIM_OP_TILING_H
#define SBP_SHIM_OP_TILING_H

#ifdef SBP_OP_TILING_HEADER
#include SBP_OP_TILING_HEADER
#endif

#endif  // SBP_SHIM_OP_TILING_H
