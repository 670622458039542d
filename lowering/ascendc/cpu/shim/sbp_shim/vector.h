// CPU shim: vector instructions (count form) and Cast, with the Atlas A2 dtype and RoundMode tables of
// shared/reference/ascendc.md §1.5 enforced (static_assert on dtypes / type pairs, runtime check on modes).
#ifndef SBP_SHIM_VECTOR_H
#define SBP_SHIM_VECTOR_H

#include <cfenv>
#include <limits>

#include "sbp_shim/tensor.h"

namespace AscendC {
namespace shim {

// ---- A2 dtype tables ------------------------------------------------------------------------------
template <typename T>
struct A2Arith : OneOf<T, int16_t, half, int32_t, float> {};  // Add Sub Mul Max Min, Adds Muls Maxs Mins
template <typename T>
struct A2Div : OneOf<T, half, float> {};
template <typename T>
struct A2Abs : OneOf<T, half, float> {};
template <typename T>
struct A2Dup : OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> {};

// Element arithmetic: half/bfloat16 through float (single ops round once, so this is the correctly
// rounded result); integers wrap like the hardware's non-saturating integer ALU.
template <typename T>
inline T FromF(float v) {
  return static_cast<T>(v);
}
template <typename T>
inline float ToF(T v) {
  return static_cast<float>(v);
}

template <typename T, typename F>
inline T Arith(T a, T b, F f) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    int64_t r = f(static_cast<int64_t>(a), static_cast<int64_t>(b));
    return static_cast<T>(static_cast<U>(static_cast<uint64_t>(r)));
  } else if constexpr (std::is_same<T, float>::value) {
    return f(a, b);
  } else {
    return FromF<T>(f(ToF(a), ToF(b)));
  }
}

template <typename T>
inline bool IsNan(T v) {
  if constexpr (std::is_integral<T>::value) {
    return false;
  } else {
    return std::isnan(ToF(v));
  }
}

// Max/Min propagate NaN (the shim's choice; IEEE 754-2019 maximum/minimum).
template <typename T>
inline T MaxV(T a, T b) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return a < b ? b : a;
}
template <typename T>
inline T MinV(T a, T b) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  return b < a ? b : a;
}

inline int64_t CheckCount(int64_t count, const char* api) {
  SBP_SHIM_CHECK(count >= 0, "%s: negative count %lld", api, static_cast<long long>(count));
  return count;
}

template <typename T, typename F>
inline void Binary(const LocalTensor<T>& dst, const LocalTensor<T>& s0, const LocalTensor<T>& s1, int64_t count,
                   const char* api, F f) {
  CheckCount(count, api);
  dst.CheckOperand(api, "dst", count);
  s0.CheckOperand(api, "src0", count);
  s1.CheckOperand(api, "src1", count);
  uint8_t* d = dst.Ptr();
  const uint8_t* a = s0.Ptr();
  const uint8_t* b = s1.Ptr();
  for (int64_t i = 0; i < count; ++i) {
    size_t o = static_cast<size_t>(i) * sizeof(T);
    Store<T>(d + o, f(Load<T>(a + o), Load<T>(b + o)));
  }
}

template <typename T, typename F>
inline void Unary(const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count, const char* api, F f) {
  CheckCount(count, api);
  dst.CheckOperand(api, "dst", count);
  src.CheckOperand(api, "src", count);
  uint8_t* d = dst.Ptr();
  const uint8_t* a = src.Ptr();
  for (int64_t i = 0; i < count; ++i) {
    size_t o = static_cast<size_t>(i) * sizeof(T);
    Store<T>(d + o, f(Load<T>(a + o)));
  }
}

}  // namespace shim

#define SBP_SHIM_A2_DTYPE(trait, api)                                                                       \
  static_assert(shim::trait<T>::value, api "<T>: T is not supported on Atlas A2 (reference/ascendc.md §1.5;" \
                                           " bf16 arithmetic must go through float)")

// ---- binary ----------------------------------------------------------------------------------------
template <typename T>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Add");
  shim::Binary(dst, src0, src1, count, "Add", [](T a, T b) { return shim::Arith(a, b, [](auto x, auto y) { return x + y; }); });
}
template <typename T>
__aicore__ inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Sub");
  shim::Binary(dst, src0, src1, count, "Sub", [](T a, T b) { return shim::Arith(a, b, [](auto x, auto y) { return x - y; }); });
}
template <typename T>
__aicore__ inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Mul");
  shim::Binary(dst, src0, src1, count, "Mul", [](T a, T b) { return shim::Arith(a, b, [](auto x, auto y) { return x * y; }); });
}
template <typename T>
__aicore__ inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Div, "Div");
  shim::Binary(dst, src0, src1, count, "Div", [](T a, T b) { return shim::Arith(a, b, [](auto x, auto y) { return x / y; }); });
}
template <typename T>
__aicore__ inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Max");
  shim::Binary(dst, src0, src1, count, "Max", [](T a, T b) { return shim::MaxV(a, b); });
}
template <typename T>
__aicore__ inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Min");
  shim::Binary(dst, src0, src1, count, "Min", [](T a, T b) { return shim::MinV(a, b); });
}

// ---- tensor-scalar (the scalar must have exactly type T: write 0.0f, not 0) ---------------------------
template <typename T, bool isSetMask = true>
__aicore__ inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Adds");
  T s = scalarValue;
  shim::Unary(dst, src, count, "Adds", [s](T a) { return shim::Arith(a, s, [](auto x, auto y) { return x + y; }); });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Muls");
  T s = scalarValue;
  shim::Unary(dst, src, count, "Muls", [s](T a) { return shim::Arith(a, s, [](auto x, auto y) { return x * y; }); });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Maxs");
  T s = scalarValue;
  shim::Unary(dst, src, count, "Maxs", [s](T a) { return shim::MaxV(a, s); });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Arith, "Mins");
  T s = scalarValue;
  shim::Unary(dst, src, count, "Mins", [s](T a) { return shim::MinV(a, s); });
}

// ---- unary -------------------------------------------------------------------------------------------
template <typename T>
__aicore__ inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Abs, "Abs");
  shim::Unary(dst, src, count, "Abs", [](T a) { return shim::FromF<T>(std::fabs(shim::ToF(a))); });
}

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
  SBP_SHIM_A2_DTYPE(A2Dup, "Duplicate");
  shim::CheckCount(count, "Duplicate");
  dst.CheckOperand("Duplicate", "dst", static_cast<uint64_t>(count));
  shim::FillElems<T>(dst.Ptr(), static_cast<uint32_t>(count), scalarValue);
}

#undef SBP_SHIM_A2_DTYPE

// ---------------------------------------------------------------------------------------------
// Cast<T (dst), U (src)>(dst, src, RoundMode, count)
// Allowed pairs and modes (A2 table of reference/ascendc.md §1.5, plus float<->int32):
//   half/bf16/int16 -> float       CAST_NONE (exact)
//   float -> float                 RINT FLOOR CEIL ROUND TRUNC (round to an integral float)
//   float -> half                  NONE(=RINT) RINT FLOOR CEIL ROUND TRUNC ODD (rounding of precision)
//   float -> bf16                  RINT FLOOR CEIL ROUND TRUNC (precision)
//   float -> int16 / int32         RINT FLOOR CEIL ROUND TRUNC, saturating; NaN -> 0 (shim's choice)
//   int32 -> float                 NONE(=RINT) RINT FLOOR CEIL ROUND TRUNC (precision)
// Any other pair (int16<->bf16, bf16->half, half->bf16, ...) is a static_assert; an illegal mode for a
// legal pair is a runtime shim failure (RoundMode is a runtime argument).
// RINT = ties to even (std::nearbyint under FE_TONEAREST), ROUND = half away from zero.
// ---------------------------------------------------------------------------------------------
namespace shim {

template <typename T, typename U>
struct CastPair : std::false_type {};
template <> struct CastPair<float, half> : std::true_type {};
template <> struct CastPair<float, bfloat16_t> : std::true_type {};
template <> struct CastPair<float, int16_t> : std::true_type {};
template <> struct CastPair<float, float> : std::true_type {};
template <> struct CastPair<half, float> : std::true_type {};
template <> struct CastPair<bfloat16_t, float> : std::true_type {};
template <> struct CastPair<int16_t, float> : std::true_type {};
template <> struct CastPair<int32_t, float> : std::true_type {};
template <> struct CastPair<float, int32_t> : std::true_type {};

inline const char* ModeName(RoundMode m) {
  switch (m) {
    case RoundMode::CAST_NONE: return "CAST_NONE";
    case RoundMode::CAST_RINT: return "CAST_RINT";
    case RoundMode::CAST_FLOOR: return "CAST_FLOOR";
    case RoundMode::CAST_CEIL: return "CAST_CEIL";
    case RoundMode::CAST_ROUND: return "CAST_ROUND";
    case RoundMode::CAST_TRUNC: return "CAST_TRUNC";
    case RoundMode::CAST_ODD: return "CAST_ODD";
    case RoundMode::CAST_HYBRID: return "CAST_HYBRID";
  }
  return "?";
}

template <typename T>
inline const char* TypeName() {
  if constexpr (std::is_same<T, float>::value) return "float";
  else if constexpr (std::is_same<T, half>::value) return "half";
  else if constexpr (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
  else if constexpr (std::is_same<T, int16_t>::value) return "int16_t";
  else if constexpr (std::is_same<T, int32_t>::value) return "int32_t";
  else return "?";
}

template <typename T, typename U>
inline bool CastModeAllowed(RoundMode m) {
  const bool toInt = m == RoundMode::CAST_RINT || m == RoundMode::CAST_FLOOR || m == RoundMode::CAST_CEIL ||
                     m == RoundMode::CAST_ROUND || m == RoundMode::CAST_TRUNC;
  if constexpr (std::is_same<T, float>::value && !std::is_same<U, float>::value && !std::is_same<U, int32_t>::value) {
    return m == RoundMode::CAST_NONE;  // widening to float is exact
  } else if constexpr (std::is_same<T, half>::value || std::is_same<U, int32_t>::value) {
    return toInt || m == RoundMode::CAST_NONE || (std::is_same<T, half>::value && m == RoundMode::CAST_ODD);
  } else {
    return toInt;  // float->float, float->bf16, float->int16, float->int32: no NONE
  }
}

inline float RoundIntegral(float f, RoundMode m) {
  switch (m) {
    case RoundMode::CAST_FLOOR: return std::floor(f);
    case RoundMode::CAST_CEIL: return std::ceil(f);
    case RoundMode::CAST_ROUND: return std::round(f);
    case RoundMode::CAST_TRUNC: return std::trunc(f);
    default: {
      int saved = std::fegetround();
      if (saved != FE_TONEAREST) std::fesetround(FE_TONEAREST);
      float r = std::nearbyint(f);
      if (saved != FE_TONEAREST) std::fesetround(saved);
      return r;
    }
  }
}

// A 16-bit float format as bit patterns: half or bfloat16.
template <typename T>
struct Narrow;
template <>
struct Narrow<half> {
  static uint16_t Rne(float f) { return __builtin_bit_cast(uint16_t, static_cast<half>(f)); }
  static double Value(uint16_t b) { return static_cast<double>(static_cast<float>(__builtin_bit_cast(half, b))); }
  static constexpr double kBeyondMax = 65536.0;  // 2^16: where the next value after 65504 would be
};
template <>
struct Narrow<bfloat16_t> {
  static uint16_t Rne(float f) { return bfloat16_t::FromFloatRne(f); }
  static double Value(uint16_t b) { return static_cast<double>(bfloat16_t::ToFloat(b)); }
  static constexpr double kBeyondMax = 3.4028236692093846e38;  // 2^128
};

inline uint16_t NextUp(uint16_t b) {  // sign-magnitude successor towards +inf
  if (b == 0x8000u) return 0x0001u;
  if (b & 0x8000u) return static_cast<uint16_t>(b - 1);
  return static_cast<uint16_t>(b + 1);  // never called on +inf (callers only step towards the value)
}
inline uint16_t NextDown(uint16_t b) {
  if (b == 0x0000u) return 0x8001u;
  if (b & 0x8000u) return static_cast<uint16_t>(b + 1);
  return static_cast<uint16_t>(b - 1);
}

// float -> half/bf16 with a RoundMode on the precision (not to an integer).
template <typename T>
inline T NarrowFloat(float f, RoundMode m) {
  using N = Narrow<T>;
  uint16_t h = N::Rne(f);
  if (std::isnan(f) || m == RoundMode::CAST_RINT || m == RoundMode::CAST_NONE) return __builtin_bit_cast(T, h);
  double v = f;
  double hv = N::Value(h);
  if (hv == v) return __builtin_bit_cast(T, h);
  // Neighbours lo < v < hi; infinities count as 2^emax+1 for the tie test.
  uint16_t lo, hi;
  if (hv < v) {
    lo = h;
    hi = NextUp(h);
  } else {
    hi = h;
    lo = NextDown(h);
  }
  auto finite = [](double x) { return std::isinf(x) ? std::copysign(N::kBeyondMax, x) : x; };
  double lov = finite(N::Value(lo)), hiv = finite(N::Value(hi));
  uint16_t r = h;
  switch (m) {
    case RoundMode::CAST_FLOOR: r = lo; break;
    case RoundMode::CAST_CEIL: r = hi; break;
    case RoundMode::CAST_TRUNC: r = v > 0 ? lo : hi; break;
    case RoundMode::CAST_ROUND:
      r = (v - lov == hiv - v) ? (v > 0 ? hi : lo) : h;
      break;
    case RoundMode::CAST_ODD: r = (lo & 1u) ? lo : hi; break;
    default: break;
  }
  return __builtin_bit_cast(T, r);
}

template <typename I>
inline I SaturateInt(float r) {
  if (std::isnan(r)) return 0;  // shim's choice, matched by lowering/fmod_reference.py
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  double d = r;
  if (d <= lo) return std::numeric_limits<I>::min();
  if (d >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(d);
}

template <typename T, typename U>
inline T CastOne(U v, RoundMode m) {
  if constexpr (std::is_same<T, float>::value && std::is_same<U, float>::value) {
    return RoundIntegral(v, m);
  } else if constexpr (std::is_same<T, float>::value && std::is_same<U, int32_t>::value) {
    // int32 -> float: round the integer to 24 bits of precision with mode m.
    double d = static_cast<double>(v);
    float rne = static_cast<float>(d);  // exact double -> float conversion, RNE
    if (static_cast<double>(rne) == d || m == RoundMode::CAST_NONE || m == RoundMode::CAST_RINT) return rne;
    float lo = static_cast<double>(rne) < d ? rne : std::nextafter(rne, -INFINITY);
    float hi = static_cast<double>(rne) > d ? rne : std::nextafter(rne, INFINITY);
    switch (m) {
      case RoundMode::CAST_FLOOR: return lo;
      case RoundMode::CAST_CEIL: return hi;
      case RoundMode::CAST_TRUNC: return d > 0 ? lo : hi;
      case RoundMode::CAST_ROUND: return (d - lo == static_cast<double>(hi) - d) ? (d > 0 ? hi : lo) : rne;
      default: return rne;
    }
  } else if constexpr (std::is_same<T, float>::value) {
    return static_cast<float>(v);  // half / bf16 / int16 -> float: exact
  } else if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
    return NarrowFloat<T>(v, m);
  } else {
    return SaturateInt<T>(RoundIntegral(v, m));
  }
}

}  // namespace shim

template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                            const uint32_t count) {
  static_assert(shim::CastPair<T, U>::value,
                "Cast<dst, src>: this type pair is not available on Atlas A2 (reference/ascendc.md §1.5); "
                "route int16<->bf16 and bf16<->half through float");
  SBP_SHIM_CHECK((shim::CastModeAllowed<T, U>(round_mode)), "Cast<%s, %s>: %s is not allowed on Atlas A2",
                 shim::TypeName<T>(), shim::TypeName<U>(), shim::ModeName(round_mode));
  dst.CheckOperand("Cast", "dst", count);
  src.CheckOperand("Cast", "src", count);
  if (sizeof(T) != sizeof(U) && count > 0) {
    uint64_t d0 = dst.ShimOffset(), d1 = d0 + static_cast<uint64_t>(count) * sizeof(T);
    uint64_t s0 = src.ShimOffset(), s1 = s0 + static_cast<uint64_t>(count) * sizeof(U);
    SBP_SHIM_CHECK(d1 <= s0 || s1 <= d0,
                   "Cast<%s, %s>: dst and src overlap; never cast in place between different widths",
                   shim::TypeName<T>(), shim::TypeName<U>());
  }
  uint8_t* d = dst.Ptr();
  const uint8_t* s = src.Ptr();
  for (uint32_t i = 0; i < count; ++i) {
    shim::Store<T>(d + static_cast<size_t>(i) * sizeof(T),
                   shim::CastOne<T, U>(shim::Load<U>(s + static_cast<size_t>(i) * sizeof(U)), round_mode));
  }
}

// ---- high-level Floor / Ceil / Trunc (half, float): Cast-based like the A2 implementation -------------
namespace shim {
template <typename T>
inline void RoundApi(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, RoundMode m,
                     const char* api) {
  static_assert(OneOf<T, half, float>::value, "Floor/Ceil/Trunc take half or float on Atlas A2");
  Unary(dst, src, count, api, [m](T a) { return FromF<T>(RoundIntegral(ToF(a), m)); });
}
}  // namespace shim

template <typename T, bool isReuseSource = false>
__aicore__ inline void Floor(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_FLOOR, "Floor");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Floor(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const LocalTensor<uint8_t>& /*sharedTmpBuffer*/, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_FLOOR, "Floor");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Ceil(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_CEIL, "Ceil");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Ceil(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const LocalTensor<uint8_t>& /*sharedTmpBuffer*/, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_CEIL, "Ceil");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Trunc(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_TRUNC, "Trunc");
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Trunc(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const LocalTensor<uint8_t>& /*sharedTmpBuffer*/, const uint32_t calCount) {
  shim::RoundApi(dst, src, calCount, RoundMode::CAST_TRUNC, "Trunc");
}

}  // namespace AscendC

#include "sbp_shim/gather.h"

#endif  // SBP_SHIM_VECTOR_H
