"""Local compute time of an op under a signature (SPEC §3.1), per device type.

Time of an op = max(FLOPs / peak FLOP/s, bytes moved / HBM bandwidth) of its largest local shard:
a roofline, the larger of the arithmetic and the memory-traffic bound. FLOPs come from the op's
`FlopModel` trait (dialects/flops.py), counted on the local shapes of its largest shard; bytes
moved are the local bytes of every operand read and every result written (a view moves none).
A partial operand or result is held whole on every rank, so its local shape is the global one. An op
that communicates inside a signature (the vocab-parallel cross-entropy) adds those collectives' time.

Peak figures are per device type (a placement's device string) and element-type class: `f32`,
`f16` (f16, bf16), `int` (i16, i32, i64). Unknown device types use the `cpu` figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation

from sbpc.dialects import dtypes
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.sbp import NdSbpAttr
from sbpc.dialects.sharding import max_local_shape
from sbpc.dialects.signatures_nn import VocabParallelBoxings
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import transition_time


@dataclass(frozen=True)
class DeviceFigures:
    """Peak arithmetic per element-type class (FLOP/s) and HBM bandwidth (bytes/s) of one device."""

    f32_flops: float
    f16_flops: float
    int_flops: float
    hbm_bytes_per_s: float

    def peak(self, element_type: Attribute) -> float:
        if isinstance(element_type, IntegerType):
            return self.int_flops
        return self.f32_flops if dtypes.size_of(element_type) >= 4 else self.f16_flops


DEVICES: dict[str, DeviceFigures] = {
    # Ascend 910B in an Atlas 800T A2 (8 NPUs): Huawei's Atlas 800T A2 datasheet gives 2.5 PFLOPS
    # FP16 per server -> ~313 TFLOPS FP16/BF16 per NPU (Cube unit). Huawei publishes no FP32 or
    # integer figure: FP32 is taken at half the FP16 rate (an assumption: the Cube unit's HF32
    # mode), integers at the FP32 rate. HBM2e 64 GB at ~1.6 TB/s nominal (the figure
    # lowering/ascendc/soc.py and the fmod tiling use; reference/ascendc.md: third-party, 2.35 TB/s measured).
    "npu": DeviceFigures(f32_flops=156e12, f16_flops=313e12, int_flops=156e12, hbm_bytes_per_s=1.6e12),
    # NVIDIA A100 SXM4 80 GB, "NVIDIA A100 Tensor Core GPU" datasheet (2021): FP32 19.5 TFLOPS
    # (TF32 tensor core 156), FP16/BF16 tensor core 312 TFLOPS, INT32 19.5 TOPS, HBM2e 2,039 GB/s.
    # f32 is taken at the non-tensor-core 19.5 TFLOPS (PyTorch's default keeps TF32 off for matmul).
    "cuda": DeviceFigures(f32_flops=19.5e12, f16_flops=312e12, int_flops=19.5e12, hbm_bytes_per_s=2.039e12),
    # Intel Xeon Platinum 8380 (Ice Lake SP, 40 cores, 2.3 GHz base; Intel ARK): 2 AVX-512 FMA
    # units -> 32 FP32 FLOP/cycle/core = 2.94 TFLOPS FP32; no native FP16 arithmetic (converted to
    # FP32, same rate); integer SIMD at the FP32 rate; 8 channels DDR4-3200 = 204.8 GB/s.
    "cpu": DeviceFigures(f32_flops=2.94e12, f16_flops=2.94e12, int_flops=2.94e12, hbm_bytes_per_s=204.8e9),
}


def device_figures(device_type: str) -> DeviceFigures:
    return DEVICES.get(device_type, DEVICES["cpu"])


def local_bytes(ty: GlobalTensorType, nd: NdSbpAttr | Sequence[object], hierarchy: Sequence[int]) -> int:
    """Bytes of the largest local shard of `ty` distributed as `nd`."""
    n = 1
    for d in max_local_shape(ty.get_shape(), nd, hierarchy):  # type: ignore[arg-type]
        n *= d
    return n * dtypes.size_of(ty.element_type)


def op_compute_s(
    op: Operation, flops: FlopModel | None, in_types: Sequence[GlobalTensorType], out_types: Sequence[GlobalTensorType],
    sig: tuple[Sequence[NdSbpAttr], Sequence[NdSbpAttr]], hierarchy: Sequence[int], device: DeviceFigures,
) -> float:
    """Seconds of local compute of `op` under signature `sig` on its largest shard (0 without a
    `FlopModel`)."""
    if flops is None:
        return 0.0
    ins = [max_local_shape(t.get_shape(), nd, hierarchy) for t, nd in zip(in_types, sig[0], strict=True)]
    outs = [max_local_shape(t.get_shape(), nd, hierarchy) for t, nd in zip(out_types, sig[1], strict=True)]
    work = flops.flops(op, ins, outs)
    moved = 0
    if flops.moves_bytes:
        for shape, t in ((s, t) for s, t in zip((*ins, *outs), (*in_types, *out_types), strict=True)):
            n = 1
            for d in shape:
                n *= d
            moved += n * dtypes.size_of(t.element_type)
    peak = device.peak(out_types[0].element_type if out_types else in_types[0].element_type)
    return max(work / peak, moved / device.hbm_bytes_per_s) + internal_comm_s(op, in_types, sig, hierarchy)


def internal_comm_s(
    op: Operation | None, in_types: Sequence[GlobalTensorType], sig: tuple[Sequence[NdSbpAttr], Sequence[NdSbpAttr]],
    hierarchy: Sequence[int],
) -> float:
    """Seconds of the collectives a signature performs inside the op (`VocabParallelBoxings`: the
    vocab-parallel cross-entropy's all-reduces of its row statistics), on the default α-β model."""
    internal = op.get_trait(VocabParallelBoxings) if op is not None else None
    if internal is None:
        return 0.0
    elt = dtypes.size_of(in_types[0].element_type)
    return sum(transition_time(src, dst, shape, elt, hierarchy) for shape, src, dst in internal.boxings(op, sig)) * 1e-6
