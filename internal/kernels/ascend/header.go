package ascend

// HostHeader implements, for the host, the subset of the Ascend C API the
// generator emits (kernel_operator.h): GlobalTensor, LocalTensor, TPipe,
// TQue, TBuf, DataCopy/DataCopyPad, the vector Add/Sub/Mul/Div/Max/Min,
// the scalar-operand Adds/Muls/Maxs/Mins, Duplicate, the unary Exp/Ln/
// Sqrt/Abs/Relu/Reciprocal/Rsqrt/Tanh/Erf and ReduceSum/ReduceMax, with
// GetBlockIdx/GetBlockNum driven by the launcher (blocks run one after
// another). TPipe enforces the Unified Buffer capacity, and the queues
// check that tensors are enqueued before they are dequeued, so a kernel
// that would not fit or misuses the pipeline fails here too.
const HostHeader = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <deque>
#include <vector>
#define __aicore__
#define __global__
#define __gm__
#define GM_ADDR uint8_t *
namespace AscendC {
static int64_t gk_block_idx, gk_block_num;
static inline int64_t GetBlockIdx() { return gk_block_idx; }
static inline int64_t GetBlockNum() { return gk_block_num; }
static inline void gk_fail(const char *m) { fprintf(stderr, "ascend emulation: %s\n", m); exit(5); }
enum class TPosition { GM, VECIN, VECOUT, VECCALC };
template <typename T> struct LocalTensor {
  T *p = nullptr; uint32_t cap = 0;
  T GetValue(uint32_t i) const { if (i >= cap) gk_fail("LocalTensor::GetValue out of range"); return p[i]; }
  void SetValue(uint32_t i, T v) { if (i >= cap) gk_fail("LocalTensor::SetValue out of range"); p[i] = v; }
  LocalTensor operator[](uint32_t off) const { LocalTensor t; t.p = p + off; t.cap = cap - off; return t; }
};
template <typename T> struct GlobalTensor {
  T *p = nullptr; uint64_t n = 0;
  void SetGlobalBuffer(T *b, uint64_t size) { p = b; n = size; }
  T GetValue(uint64_t i) const { if (i >= n) gk_fail("GlobalTensor::GetValue out of range"); return p[i]; }
  void SetValue(uint64_t i, T v) { if (i >= n) gk_fail("GlobalTensor::SetValue out of range"); p[i] = v; }
  GlobalTensor operator[](uint64_t off) const { GlobalTensor g; g.p = p + off; g.n = off <= n ? n - off : 0; return g; }
};
static const uint32_t gk_ub_bytes = 192 * 1024; /* Ascend910B AI Vector core Unified Buffer */
struct TPipe;
struct gk_buf { std::vector<uint8_t> mem; };
template <TPosition pos, int depth> struct TQue {
  std::vector<gk_buf> slots; std::vector<bool> used; uint32_t bytes = 0;
  std::deque<void *> q;
  template <typename T> LocalTensor<T> AllocTensor() {
    for (size_t i = 0; i < slots.size(); i++) if (!used[i]) { used[i] = true; LocalTensor<T> t; t.p = (T *)slots[i].mem.data(); t.cap = bytes / sizeof(T); return t; }
    gk_fail("TQue::AllocTensor: no free buffer"); return LocalTensor<T>();
  }
  template <typename T> void EnQue(const LocalTensor<T> &t) { q.push_back((void *)t.p); }
  template <typename T> LocalTensor<T> DeQue() {
    if (q.empty()) gk_fail("TQue::DeQue on an empty queue");
    LocalTensor<T> t; t.p = (T *)q.front(); t.cap = bytes / sizeof(T); q.pop_front(); return t;
  }
  template <typename T> void FreeTensor(const LocalTensor<T> &t) {
    for (size_t i = 0; i < slots.size(); i++) if ((void *)slots[i].mem.data() == (void *)t.p) { used[i] = false; return; }
    gk_fail("TQue::FreeTensor of a foreign tensor");
  }
};
template <TPosition pos = TPosition::VECCALC> struct TBuf {
  gk_buf b; uint32_t bytes = 0;
  template <typename T> LocalTensor<T> Get() { LocalTensor<T> t; t.p = (T *)b.mem.data(); t.cap = bytes / sizeof(T); return t; }
};
struct TPipe {
  uint32_t used = 0;
  void take(uint32_t n) { used += (n + 31) / 32 * 32; if (used > gk_ub_bytes) gk_fail("TPipe: Unified Buffer capacity exceeded"); }
  template <TPosition pos, int depth> void InitBuffer(TQue<pos, depth> &q, int num, uint32_t bytes) {
    take((uint32_t)num * bytes); q.slots.resize(num); q.used.assign(num, false); q.bytes = bytes;
    for (auto &s : q.slots) s.mem.assign(bytes + 32, 0);
  }
  template <TPosition pos> void InitBuffer(TBuf<pos> &b, uint32_t bytes) { take(bytes); b.bytes = bytes; b.b.mem.assign(bytes + 32, 0); }
};
struct DataCopyExtParams { uint16_t blockCount; uint32_t blockLen; uint32_t srcStride; uint32_t dstStride; uint32_t rsv; };
template <typename T> struct DataCopyPadExtParams { bool isPad; uint8_t leftPadding; uint8_t rightPadding; T paddingValue; };
template <typename T> void DataCopy(const LocalTensor<T> &d, const GlobalTensor<T> &s, uint32_t n) {
  if ((n * sizeof(T)) % 32) gk_fail("DataCopy length is not a multiple of 32 bytes (use DataCopyPad)");
  if (n > d.cap || n > s.n) gk_fail("DataCopy out of range"); memcpy(d.p, s.p, n * sizeof(T));
}
template <typename T> void DataCopy(const GlobalTensor<T> &d, const LocalTensor<T> &s, uint32_t n) {
  if ((n * sizeof(T)) % 32) gk_fail("DataCopy length is not a multiple of 32 bytes (use DataCopyPad)");
  if (n > s.cap || n > d.n) gk_fail("DataCopy out of range"); memcpy(d.p, s.p, n * sizeof(T));
}
template <typename T> void DataCopyPad(const LocalTensor<T> &d, const GlobalTensor<T> &s, const DataCopyExtParams &p, const DataCopyPadExtParams<T> &) {
  uint32_t n = p.blockLen / sizeof(T);
  if (p.blockCount != 1 || n > d.cap || n > s.n) gk_fail("DataCopyPad out of range"); memcpy(d.p, s.p, p.blockLen);
}
template <typename T> void DataCopyPad(const GlobalTensor<T> &d, const LocalTensor<T> &s, const DataCopyExtParams &p) {
  uint32_t n = p.blockLen / sizeof(T);
  if (p.blockCount != 1 || n > s.cap || n > d.n) gk_fail("DataCopyPad out of range"); memcpy(d.p, s.p, p.blockLen);
}
#define GK_CHECK(t, n) if ((uint32_t)(n) > (t).cap) gk_fail("vector operand too short")
#define GK_BIN(name, expr) template <typename T> void name(const LocalTensor<T> &d, const LocalTensor<T> &a, const LocalTensor<T> &b, int32_t n) { \
  GK_CHECK(d, n); GK_CHECK(a, n); GK_CHECK(b, n); for (int32_t i = 0; i < n; i++) { T x = a.p[i], y = b.p[i]; d.p[i] = (expr); } }
GK_BIN(Add, x + y) GK_BIN(Sub, x - y) GK_BIN(Mul, x * y) GK_BIN(Div, x / y)
GK_BIN(Max, (x > y || x != x) ? x : y) GK_BIN(Min, (x < y || x != x) ? x : y)
#define GK_SCA(name, expr) template <typename T> void name(const LocalTensor<T> &d, const LocalTensor<T> &a, T y, int32_t n) { \
  GK_CHECK(d, n); GK_CHECK(a, n); for (int32_t i = 0; i < n; i++) { T x = a.p[i]; d.p[i] = (expr); } }
GK_SCA(Adds, x + y) GK_SCA(Muls, x * y) GK_SCA(Maxs, (x > y || x != x) ? x : y) GK_SCA(Mins, (x < y || x != x) ? x : y)
#define GK_UN(name, expr) template <typename T> void name(const LocalTensor<T> &d, const LocalTensor<T> &a, int32_t n) { \
  GK_CHECK(d, n); GK_CHECK(a, n); for (int32_t i = 0; i < n; i++) { T x = a.p[i]; d.p[i] = (expr); } }
GK_UN(Exp, expf(x)) GK_UN(Ln, logf(x)) GK_UN(Sqrt, sqrtf(x)) GK_UN(Abs, fabsf(x)) GK_UN(Relu, x > 0 ? x : 0)
GK_UN(Reciprocal, 1 / x) GK_UN(Rsqrt, 1 / sqrtf(x)) GK_UN(Tanh, tanhf(x)) GK_UN(Erf, erff(x))
template <typename T> void Duplicate(const LocalTensor<T> &d, T v, int32_t n) { GK_CHECK(d, n); for (int32_t i = 0; i < n; i++) d.p[i] = v; }
/* Reductions leave the result in dst[0]; the work tensor is required by
   the API (it holds partial sums on hardware). Sums are pairwise, as the
   hardware's tree reduction is. */
template <typename T> static double gk_pairsum(const T *p, int32_t n) {
  if (n <= 8) { double s = 0; for (int32_t i = 0; i < n; i++) s += p[i]; return s; }
  return gk_pairsum(p, n / 2) + gk_pairsum(p + n / 2, n - n / 2);
}
template <typename T> void ReduceSum(const LocalTensor<T> &d, const LocalTensor<T> &s, const LocalTensor<T> &w, int32_t n) {
  GK_CHECK(s, n); GK_CHECK(w, 1); d.p[0] = (T)gk_pairsum(s.p, n);
}
template <typename T> void ReduceMax(const LocalTensor<T> &d, const LocalTensor<T> &s, const LocalTensor<T> &w, int32_t n, bool calIndex = false) {
  GK_CHECK(s, n); GK_CHECK(w, 1); T m = s.p[0]; for (int32_t i = 1; i < n; i++) if (s.p[i] > m || s.p[i] != s.p[i]) m = s.p[i]; d.p[0] = m;
}
template <typename T> void ReduceMin(const LocalTensor<T> &d, const LocalTensor<T> &s, const LocalTensor<T> &w, int32_t n, bool calIndex = false) {
  GK_CHECK(s, n); GK_CHECK(w, 1); T m = s.p[0]; for (int32_t i = 1; i < n; i++) if (s.p[i] < m || s.p[i] != s.p[i]) m = s.p[i]; d.p[0] = m;
}
static inline void PipeBarrier() {}
} /* namespace AscendC */
`

// DeviceHeader opens every generated source: the real kernel_operator.h
// on the device, the emulation (HostHeader, included first by the host
// build) otherwise.
const DeviceHeader = `#ifndef GK_HOST_EMULATION
#include "kernel_operator.h"
#endif
using namespace AscendC;
#define GK_DEV static __aicore__ inline
`
