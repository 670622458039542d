// CPU shim: LocalTensor, GlobalTensor, TPipe, TQue, TBuf and the system functions.
#ifndef SBP_SHIM_TENSOR_H
#define SBP_SHIM_TENSOR_H

#include "sbp_shim/core.h"

namespace AscendC {

// ---------------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------------
__aicore__ inline int64_t GetBlockIdx() { return shim::g_core.blockIdx; }
__aicore__ inline int64_t GetBlockNum() { return shim::g_core.blockNum; }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline int64_t GetTaskRation() { return 1; }

template <pipe_t pipe = PIPE_ALL>
__aicore__ inline void PipeBarrier() {}
template <HardEvent evt>
__aicore__ inline void SetFlag(int32_t /*eventId*/) {}
template <HardEvent evt>
__aicore__ inline void WaitFlag(int32_t /*eventId*/) {}
__aicore__ inline void SyncAll() {}

// ---------------------------------------------------------------------------------------------
// LocalTensor<T>: a view of `size` elements of T at byte offset `off` of the core's UB.
// ---------------------------------------------------------------------------------------------
template <typename T>
class LocalTensor {
 public:
  using PrimType = T;

  LocalTensor() = default;

  // Sub-view starting `offset` elements further (the hardware address must stay 32-byte aligned for
  // vector and copy operands; that is checked where the view is used, not here).
  LocalTensor operator[](uint32_t offset) const {
    CheckValid("operator[]");
    SBP_SHIM_CHECK(offset <= size_, "LocalTensor[%u] outside a tensor of %u elements", offset, size_);
    return LocalTensor(off_ + offset * static_cast<uint32_t>(sizeof(T)), size_ - offset, pos_);
  }

  T GetValue(uint32_t index) const {
    CheckValid("GetValue");
    SBP_SHIM_CHECK(index < size_, "LocalTensor::GetValue(%u) outside a tensor of %u elements", index, size_);
    return shim::Load<T>(Ptr() + static_cast<size_t>(index) * sizeof(T));
  }

  void SetValue(uint32_t index, T value) const {
    CheckValid("SetValue");
    SBP_SHIM_CHECK(index < size_, "LocalTensor::SetValue(%u) outside a tensor of %u elements", index, size_);
    shim::Store<T>(Ptr() + static_cast<size_t>(index) * sizeof(T), value);
  }

  uint32_t GetSize() const { return size_; }
  void SetSize(uint32_t size) {
    SBP_SHIM_CHECK(static_cast<uint64_t>(off_) + static_cast<uint64_t>(size) * sizeof(T) <= TOTAL_UB_SIZE,
                   "LocalTensor::SetSize(%u) runs past the end of UB", size);
    size_ = size;
  }
  uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
  uint64_t GetPhyAddr() const { return off_; }  // byte address inside UB
  TPosition GetPosition() const { return pos_; }

  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    CheckValid("ReinterpretCast");
    SBP_SHIM_CHECK(off_ % alignof(U) == 0, "ReinterpretCast to a %zu-byte type at UB byte %u", sizeof(U), off_);
    return LocalTensor<U>(off_, static_cast<uint32_t>((static_cast<uint64_t>(size_) * sizeof(T)) / sizeof(U)),
                          pos_);
  }

  // --- shim internals --------------------------------------------------------------------------
  LocalTensor(uint32_t byteOffset, uint32_t size, TPosition pos) : off_(byteOffset), size_(size), pos_(pos),
                                                                     valid_(true) {}
  bool ShimValid() const { return valid_; }
  uint32_t ShimOffset() const { return off_; }
  uint8_t* Ptr() const { return shim::UbBase() + off_; }
  void CheckValid(const char* api) const {
    SBP_SHIM_CHECK(valid_, "%s on a LocalTensor that was never allocated (default-constructed)", api);
  }
  // Operand check of vector / copy instructions: allocated, 32-byte aligned base, `count` in range.
  void CheckOperand(const char* api, const char* role, uint64_t count) const {
    SBP_SHIM_CHECK(valid_, "%s: %s operand is a LocalTensor that was never allocated", api, role);
    SBP_SHIM_CHECK(off_ % ONE_BLK_SIZE == 0, "%s: %s operand at UB byte %u is not 32-byte aligned", api, role,
                   off_);
    SBP_SHIM_CHECK(count <= size_, "%s: %s operand has %u elements, the instruction touches %llu", api, role,
                   size_, static_cast<unsigned long long>(count));
  }

 private:
  template <typename U>
  friend class LocalTensor;
  uint32_t off_ = 0;
  uint32_t size_ = 0;
  TPosition pos_ = TPosition::VECCALC;
  bool valid_ = false;
};

// ---------------------------------------------------------------------------------------------
// GlobalTensor<T>: a view of GM. SetGlobalBuffer(ptr, n) bounds every later access to n elements;
// SetGlobalBuffer(ptr) leaves the view unbounded.
// ---------------------------------------------------------------------------------------------
template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;

  GlobalTensor() = default;

  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    CheckAlign(buffer);
    base_ = reinterpret_cast<uint8_t*>(buffer);
    size_ = bufferSize;
    bounded_ = true;
  }
  void SetGlobalBuffer(__gm__ T* buffer) {
    CheckAlign(buffer);
    base_ = reinterpret_cast<uint8_t*>(buffer);
    size_ = 0;
    bounded_ = false;
  }

  GlobalTensor operator[](uint64_t offset) const {
    SBP_SHIM_CHECK(!bounded_ || offset <= size_, "GlobalTensor[%llu] outside a buffer of %llu elements",
                   static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size_));
    GlobalTensor r;
    r.base_ = base_ == nullptr ? nullptr : base_ + offset * sizeof(T);
    r.size_ = bounded_ ? size_ - offset : 0;
    r.bounded_ = bounded_;
    return r;
  }

  T GetValue(uint64_t offset) const {
    CheckRange("GlobalTensor::GetValue", offset, 1);
    shim::g_counters.gmToUbBytes += sizeof(T);
    shim::g_counters.gmScalarReadBytes += sizeof(T);
    return shim::Load<T>(base_ + offset * sizeof(T));
  }
  void SetValue(uint64_t offset, T value) const {
    CheckRange("GlobalTensor::SetValue", offset, 1);
    shim::g_counters.ubToGmBytes += sizeof(T);
    shim::g_counters.gmScalarWriteBytes += sizeof(T);
    shim::Store<T>(base_ + offset * sizeof(T), value);
  }

  __gm__ T* GetPhyAddr() const { return reinterpret_cast<T*>(base_); }
  __gm__ T* GetPhyAddr(uint64_t offset) const { return reinterpret_cast<T*>(base_ + offset * sizeof(T)); }
  uint64_t GetSize() const { return size_; }

  // --- shim internals --------------------------------------------------------------------------
  uint8_t* Ptr() const { return base_; }
  // [offset, offset+count) elements must lie inside a bounded view; the base must be set.
  void CheckRange(const char* api, uint64_t offset, uint64_t count) const {
    SBP_SHIM_CHECK(base_ != nullptr, "%s on a GlobalTensor without SetGlobalBuffer (or a null GM pointer)", api);
    SBP_SHIM_CHECK(!bounded_ || (offset <= size_ && count <= size_ - offset),
                   "%s: elements [%llu, %llu) outside a GM buffer of %llu elements", api,
                   static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset + count),
                   static_cast<unsigned long long>(size_));
  }

 private:
  static void CheckAlign(const void* p) {
    SBP_SHIM_CHECK(reinterpret_cast<uintptr_t>(p) % sizeof(T) == 0,
                   "SetGlobalBuffer: GM address %p is not aligned to sizeof(T) = %zu", p, sizeof(T));
  }
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  bool bounded_ = false;
};

// ---------------------------------------------------------------------------------------------
// TQue / TBuf / TPipe
// ---------------------------------------------------------------------------------------------
class TPipe;

namespace shim {
// State shared by TQue and TBuf of any position.
class QueBase {
 public:
  enum class BufState : uint8_t { FREE, ALLOCATED, ENQUEUED, DEQUEUED };
  static constexpr uint32_t MAX_BUFS = 16;

  bool ShimInitialized() const { return num_ > 0; }

 protected:
  friend class ::AscendC::TPipe;
  void ShimInit(uint32_t base, uint32_t num, uint32_t len) {
    base_ = base;
    num_ = num;
    len_ = len;
    for (uint32_t i = 0; i < MAX_BUFS; ++i) state_[i] = BufState::FREE;
    allocNext_ = freeNext_ = live_ = 0;
    fifoHead_ = fifoCount_ = 0;
  }
  uint32_t base_ = 0;
  uint32_t num_ = 0;
  uint32_t len_ = 0;
  BufState state_[MAX_BUFS] = {};
  uint32_t allocNext_ = 0;  // next buffer AllocTensor hands out (round robin)
  uint32_t freeNext_ = 0;   // the buffer FreeTensor must release next (FIFO)
  uint32_t live_ = 0;
  uint32_t fifo_[MAX_BUFS] = {};
  uint32_t fifoHead_ = 0;
  uint32_t fifoCount_ = 0;
};
}  // namespace shim

// TQue<pos, depth>: `num` buffers of `len` bytes (TPipe::InitBuffer). The shim checks: at most `num`
// live buffers, AllocTensor round robin, EnQue/DeQue FIFO, FreeTensor in allocation order (FIFO), and
// only tensors of this queue. (Depth is not enforced: depth 1 with num 2 is the usual double buffer.)
template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public shim::QueBase {
 public:
  static constexpr TPosition kPosition = pos;
  static constexpr bool kIsQue = true;

  TQue() = default;
  TQue(const TQue&) = delete;
  TQue& operator=(const TQue&) = delete;

  template <typename T>
  LocalTensor<T> AllocTensor() {
    SBP_SHIM_CHECK(num_ > 0, "AllocTensor on a TQue without TPipe::InitBuffer");
    SBP_SHIM_CHECK(live_ < num_, "AllocTensor: all %u buffers of the queue are in use (missing FreeTensor?)", num_);
    uint32_t i = allocNext_;
    SBP_SHIM_CHECK(state_[i] == BufState::FREE, "AllocTensor: buffer %u is still in use", i);
    state_[i] = BufState::ALLOCATED;
    allocNext_ = (allocNext_ + 1) % num_;
    ++live_;
    uint32_t off = base_ + i * len_;
    std::memset(shim::UbBase() + off, shim::UB_POISON_BYTE, len_);  // fresh buffers hold garbage on hardware
    return LocalTensor<T>(off, len_ / static_cast<uint32_t>(sizeof(T)), pos);
  }

  template <typename T>
  bool EnQue(const LocalTensor<T>& tensor) {
    uint32_t i = Index(tensor, "EnQue");
    SBP_SHIM_CHECK(state_[i] == BufState::ALLOCATED, "EnQue: buffer %u is not freshly allocated (state %d)", i,
                   static_cast<int>(state_[i]));
    state_[i] = BufState::ENQUEUED;
    fifo_[(fifoHead_ + fifoCount_) % MAX_BUFS] = i;
    ++fifoCount_;
    return true;
  }

  template <typename T>
  LocalTensor<T> DeQue() {
    SBP_SHIM_CHECK(fifoCount_ > 0, "DeQue on an empty queue (would hang on hardware)");
    uint32_t i = fifo_[fifoHead_];
    fifoHead_ = (fifoHead_ + 1) % MAX_BUFS;
    --fifoCount_;
    state_[i] = BufState::DEQUEUED;
    return LocalTensor<T>(base_ + i * len_, len_ / static_cast<uint32_t>(sizeof(T)), pos);
  }

  template <typename T>
  void FreeTensor(LocalTensor<T>& tensor) {
    uint32_t i = Index(tensor, "FreeTensor");
    SBP_SHIM_CHECK(state_[i] == BufState::DEQUEUED || state_[i] == BufState::ALLOCATED,
                   "FreeTensor: buffer %u is %s", i, state_[i] == BufState::FREE ? "already free" : "still enqueued");
    SBP_SHIM_CHECK(i == freeNext_, "FreeTensor: buffer %u freed before buffer %u (queue buffers are FIFO)", i,
                   freeNext_);
    state_[i] = BufState::FREE;
    freeNext_ = (freeNext_ + 1) % num_;
    --live_;
  }

  bool VacantInQue() const { return live_ < num_; }
  bool HasTensorInQue() const { return fifoCount_ > 0; }
  int32_t GetTensorCountInQue() const { return static_cast<int32_t>(fifoCount_); }
  bool HasIdleBuffer() const { return live_ < num_; }

 private:
  template <typename T>
  uint32_t Index(const LocalTensor<T>& t, const char* api) const {
    SBP_SHIM_CHECK(num_ > 0, "%s on a TQue without TPipe::InitBuffer", api);
    SBP_SHIM_CHECK(t.ShimValid(), "%s of a LocalTensor that was never allocated", api);
    uint32_t off = t.ShimOffset();
    SBP_SHIM_CHECK(off >= base_ && off < base_ + num_ * len_ && (off - base_) % len_ == 0,
                   "%s of a tensor (UB byte %u) that is not a buffer of this queue", api, off);
    return (off - base_) / len_;
  }
};

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
using TQueBind = TQue<src, depth, mask>;

// TBuf<pos>: one buffer of `len` bytes for temporaries; no queue semantics.
template <TPosition pos = TPosition::LCM>
class TBuf : public shim::QueBase {
 public:
  static constexpr TPosition kPosition = pos;
  static constexpr bool kIsQue = false;

  TBuf() = default;
  TBuf(const TBuf&) = delete;
  TBuf& operator=(const TBuf&) = delete;

  template <typename T>
  LocalTensor<T> Get() const {
    SBP_SHIM_CHECK(num_ > 0, "TBuf::Get without TPipe::InitBuffer");
    return LocalTensor<T>(base_, len_ / static_cast<uint32_t>(sizeof(T)), pos);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t len) const {
    SBP_SHIM_CHECK(num_ > 0, "TBuf::Get without TPipe::InitBuffer");
    SBP_SHIM_CHECK(static_cast<uint64_t>(len) * sizeof(T) <= len_, "TBuf::Get(%u) of %zu-byte elements > %u bytes",
                   len, sizeof(T), len_);
    return LocalTensor<T>(base_, len, pos);
  }
  template <typename T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) const {
    SBP_SHIM_CHECK(num_ > 0, "TBuf::GetWithOffset without TPipe::InitBuffer");
    SBP_SHIM_CHECK(bufOffset % ONE_BLK_SIZE == 0, "TBuf::GetWithOffset: offset %u not 32-byte aligned", bufOffset);
    SBP_SHIM_CHECK(bufOffset + static_cast<uint64_t>(size) * sizeof(T) <= len_,
                   "TBuf::GetWithOffset(%u, %u) past the buffer's %u bytes", size, bufOffset, len_);
    return LocalTensor<T>(base_ + bufOffset, size, pos);
  }
};

// TPipe: hands out UB. Every InitBuffer rounds its length up to 32 bytes and the running total of the
// core must stay <= TOTAL_UB_SIZE bytes. Pipes nest like a stack: a pipe's buffers are released when it is
// destroyed (Destroy() or its destructor), so a core may build a fresh pipe per branch.
class TPipe {
 public:
  TPipe() {
    base_ = shim::g_core.ubTop;
    prevPipe_ = shim::g_core.currentPipe;
    shim::g_core.currentPipe = this;
    for (uint32_t i = 0; i < kPositions; ++i) queBufs_[i] = 0;
  }
  ~TPipe() { Release(); }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  void Init() {}
  void Destroy() { Release(); }
  void Reset() {
    SBP_SHIM_CHECK(!released_, "TPipe::Reset after Destroy");
    shim::g_core.ubTop = base_;
    used_ = 0;
  }

  template <class Q>
  bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
    static_assert(std::is_base_of<shim::QueBase, Q>::value && Q::kIsQue,
                  "TPipe::InitBuffer(que, num, len) takes a TQue (use InitBuffer(tbuf, len) for a TBuf)");
    SBP_SHIM_CHECK(!que.ShimInitialized(), "InitBuffer called twice for the same TQue");
    SBP_SHIM_CHECK(num >= 1 && num <= shim::QueBase::MAX_BUFS, "InitBuffer: num = %u buffers (1..%u)", num,
                   shim::QueBase::MAX_BUFS);
    uint32_t p = static_cast<uint32_t>(Q::kPosition);
    queBufs_[p] += num;
    SBP_SHIM_CHECK(queBufs_[p] <= MAX_QUE_BUFFERS_PER_POSITION,
                   "InitBuffer: %u queue buffers at one TPosition (A2 allows %u)", queBufs_[p],
                   MAX_QUE_BUFFERS_PER_POSITION);
    uint32_t rounded = Round(len, "InitBuffer(TQue)");
    que.ShimInit(Allocate(static_cast<uint64_t>(rounded) * num, "InitBuffer(TQue)"), num, rounded);
    return true;
  }

  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    SBP_SHIM_CHECK(!buf.ShimInitialized(), "InitBuffer called twice for the same TBuf");
    uint32_t rounded = Round(len, "InitBuffer(TBuf)");
    buf.ShimInit(Allocate(rounded, "InitBuffer(TBuf)"), 1, rounded);
    return true;
  }

  template <HardEvent evt>
  TEventID FetchEventID() { return 0; }
  TEventID FetchEventID(HardEvent /*evt*/) { return 0; }
  TEventID AllocEventID() { return 0; }
  void ReleaseEventID(TEventID /*id*/) {}

  uint32_t ShimUsedBytes() const { return used_; }

 private:
  static constexpr uint32_t kPositions = static_cast<uint32_t>(TPosition::MAX) + 1;

  static uint32_t Round(uint32_t len, const char* api) {
    SBP_SHIM_CHECK(len > 0, "%s: length 0", api);
    SBP_SHIM_CHECK(len <= TOTAL_UB_SIZE, "%s: length %u bytes > UB size %u", api, len, TOTAL_UB_SIZE);
    return (len + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  }

  uint32_t Allocate(uint64_t bytes, const char* api) {
    SBP_SHIM_CHECK(!released_, "%s on a destroyed TPipe", api);
    SBP_SHIM_CHECK(shim::g_core.ubTop == base_ + used_,
                   "%s: another TPipe allocated UB after this one (only one live TPipe may allocate)", api);
    uint64_t top = static_cast<uint64_t>(shim::g_core.ubTop) + bytes;
    SBP_SHIM_CHECK(top <= TOTAL_UB_SIZE,
                   "UB overflow: %s of %llu bytes brings the core's UB total to %llu > %u bytes", api,
                   static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(top), TOTAL_UB_SIZE);
    uint32_t off = shim::g_core.ubTop;
    shim::g_core.ubTop = static_cast<uint32_t>(top);
    used_ += static_cast<uint32_t>(bytes);
    if (shim::g_core.ubTop > shim::g_core.ubCoreHigh) shim::g_core.ubCoreHigh = shim::g_core.ubTop;
    return off;
  }

  void Release() {
    if (released_) return;
    released_ = true;
    // Stack discipline; a pipe destroyed out of order simply leaves the top where the later pipe put it.
    if (shim::g_core.ubTop == base_ + used_) shim::g_core.ubTop = base_;
    if (shim::g_core.currentPipe == this) shim::g_core.currentPipe = prevPipe_;
  }

  uint32_t base_ = 0;
  uint32_t used_ = 0;
  bool released_ = false;
  void* prevPipe_ = nullptr;
  uint32_t queBufs_[kPositions];
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(shim::g_core.currentPipe); }

template <typename T, CacheLine entire = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& /*gm*/) {}

}  // namespace AscendC

#endif  // SBP_SHIM_TENSOR_H
