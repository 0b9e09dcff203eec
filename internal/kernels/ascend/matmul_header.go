package ascend

// HostMatmulHeader implements, for the host, the part of the Ascend C
// high-level Matmul API (lib/matmul_intf.h) the cube strategy emits:
// MatmulType, TCubeTiling, REGIST_MATMUL_OBJ and Matmul's SetTensorA/
// SetTensorB/SetBias/SetTail/Iterate/GetTensorC/End for ND float32 GM
// operands and a VECIN (Unified Buffer) result.
//
// It models what a kernel can get wrong on the Cube unit: REGIST checks the
// tiling against the 910B buffers (L1 512 KiB; L0A and L0B 64 KiB, L0C
// 128 KiB, each divided by its double-buffer factor) and the fractal
// alignment (baseM, baseN multiples of 16, baseK of 32 bytes); operands are
// read with range checks relative to the offset GlobalTensor the kernel
// passed (leading dims from the tiling's M/N/Ka/Kb, as SetOrgShape defaults);
// GetTensorC needs a preceding successful Iterate and a destination of
// baseM*baseN elements, and poisons the tile's padding with NaN. Iterate
// walks the baseM x baseN tiles of the single-core shape with M fastest
// (iterateOrder 0). Accumulation is per baseK slice into a float32 L0C
// starting from the bias, as the Cube's MMAD sequence does.
const HostMatmulHeader = `namespace AscendC {
enum class CubeFormat { ND, NZ };
template <TPosition P, CubeFormat F, typename T> struct MatmulType { typedef T DType; static const TPosition pos = P; static const CubeFormat format = F; };
struct TCubeTiling {
  int32_t usedCoreNum, M, N, Ka, Kb, singleCoreM, singleCoreN, singleCoreK, baseM, baseN, baseK;
  int32_t depthA1, depthB1, stepM, stepN, stepKa, stepKb, isBias, iterateOrder, dbL0A, dbL0B, dbL0C;
  int32_t shareL1Size, shareL0CSize, shareUbSize, transLength;
};
static uint8_t gk_sys_workspace[64];
static inline GM_ADDR GetSysWorkSpacePtr() { return gk_sys_workspace; }
static const int64_t gk_l1_bytes = 512 * 1024, gk_l0ab_bytes = 64 * 1024, gk_l0c_bytes = 128 * 1024;
template <class A, class B, class C, class BIAS> struct Matmul {
  typedef typename A::DType TA; typedef typename B::DType TB; typedef typename C::DType TC; typedef typename BIAS::DType TBias;
  const TCubeTiling *t = nullptr;
  GlobalTensor<TA> a; GlobalTensor<TB> b; GlobalTensor<TBias> bias;
  bool ta = false, tb = false, hasA = false, hasB = false, hasBias = false;
  int32_t sm = 0, sn = 0, sk = 0, it = -1;
  void Init(const TCubeTiling *tl, TPipe *) {
    t = tl;
    if (A::pos != TPosition::GM || B::pos != TPosition::GM || A::format != CubeFormat::ND || B::format != CubeFormat::ND) gk_fail("Matmul: A and B must be ND tensors in GM");
    if (C::pos != TPosition::VECIN && C::pos != TPosition::GM) gk_fail("Matmul: C must be in GM or VECIN");
    if (t->baseM <= 0 || t->baseN <= 0 || t->baseK <= 0 || t->baseM % 16 || t->baseN % 16 || (t->baseK * (int32_t)sizeof(TA)) % 32)
      gk_fail("Matmul tiling: baseM/baseN must be multiples of 16 and baseK of 32 bytes");
    if (t->dbL0A < 1 || t->dbL0B < 1 || t->dbL0C < 1 || t->depthA1 < 1 || t->depthB1 < 1) gk_fail("Matmul tiling: depths and double-buffer factors must be >= 1");
    if ((int64_t)t->baseM * t->baseK * sizeof(TA) * t->dbL0A > gk_l0ab_bytes) gk_fail("Matmul tiling: L0A capacity exceeded");
    if ((int64_t)t->baseK * t->baseN * sizeof(TB) * t->dbL0B > gk_l0ab_bytes) gk_fail("Matmul tiling: L0B capacity exceeded");
    if ((int64_t)t->baseM * t->baseN * sizeof(float) * t->dbL0C > gk_l0c_bytes) gk_fail("Matmul tiling: L0C capacity exceeded");
    int64_t l1 = (int64_t)t->depthA1 * t->baseM * t->baseK * sizeof(TA) + (int64_t)t->depthB1 * t->baseK * t->baseN * sizeof(TB) + (t->isBias ? (int64_t)t->baseN * sizeof(TBias) : 0);
    if (l1 > gk_l1_bytes) gk_fail("Matmul tiling: L1 capacity exceeded");
    if (t->Ka != t->Kb || t->singleCoreK > t->Ka || t->singleCoreM > t->M || t->singleCoreN > t->N) gk_fail("Matmul tiling: inconsistent shapes");
    if (t->iterateOrder != 0) gk_fail("Matmul emulation: only iterateOrder 0 (M fastest)");
    sm = t->singleCoreM; sn = t->singleCoreN; sk = t->singleCoreK;
  }
  void SetTensorA(const GlobalTensor<TA> &g, bool trans = false) { a = g; ta = trans; hasA = true; }
  void SetTensorB(const GlobalTensor<TB> &g, bool trans = false) { b = g; tb = trans; hasB = true; }
  void SetBias(const GlobalTensor<TBias> &g) { if (!t || !t->isBias) gk_fail("Matmul::SetBias without tiling.isBias"); bias = g; hasBias = true; }
  void SetTail(int32_t tm = -1, int32_t tn = -1, int32_t tk = -1) {
    if (tm > 0) sm = tm; if (tn > 0) sn = tn; if (tk > 0) sk = tk;
    if (sm > t->M || sn > t->N || sk > t->Ka) gk_fail("Matmul::SetTail beyond the original shape");
  }
  int32_t roundM() const { return (sm + t->baseM - 1) / t->baseM; }
  int32_t roundN() const { return (sn + t->baseN - 1) / t->baseN; }
  template <bool sync = true> bool Iterate(bool enPartialSum = false) {
    if (!t) gk_fail("Matmul::Iterate before REGIST_MATMUL_OBJ");
    if (!hasA || !hasB) gk_fail("Matmul::Iterate before SetTensorA/SetTensorB");
    it++;
    if (it >= roundM() * roundN()) { it = -1; return false; }
    return true;
  }
  TA ldA(int64_t m, int64_t k) const { uint64_t o = ta ? (uint64_t)(k * t->M + m) : (uint64_t)(m * t->Ka + k); if (o >= a.n) gk_fail("Matmul: A read out of range"); return a.p[o]; }
  TB ldB(int64_t k, int64_t n) const { uint64_t o = tb ? (uint64_t)(n * t->Kb + k) : (uint64_t)(k * t->N + n); if (o >= b.n) gk_fail("Matmul: B read out of range"); return b.p[o]; }
  template <bool sync = true> void GetTensorC(const LocalTensor<TC> &c, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    if (it < 0) gk_fail("Matmul::GetTensorC without a successful Iterate");
    if (!enSequentialWrite) gk_fail("Matmul emulation: GetTensorC to the Unified Buffer needs enSequentialWrite");
    if ((int64_t)c.cap < (int64_t)t->baseM * t->baseN) gk_fail("Matmul::GetTensorC: destination smaller than baseM*baseN");
    const int32_t m0 = (it % roundM()) * t->baseM, n0 = (it / roundM()) * t->baseN;
    const int32_t rows = sm - m0 < t->baseM ? sm - m0 : t->baseM, cols = sn - n0 < t->baseN ? sn - n0 : t->baseN;
    for (int32_t i = 0; i < t->baseM * t->baseN; i++) c.p[i] = (TC)NAN;
    for (int32_t r = 0; r < rows; r++)
      for (int32_t q = 0; q < cols; q++) {
        float acc = 0;
        if (hasBias) { if ((uint64_t)(n0 + q) >= bias.n) gk_fail("Matmul: bias read out of range"); acc = (float)bias.p[n0 + q]; }
        for (int32_t k0 = 0; k0 < sk; k0 += t->baseK) {
          double part = 0;
          for (int32_t k = k0; k < sk && k < k0 + t->baseK; k++) part += (double)ldA(m0 + r, k) * (double)ldB(k, n0 + q);
          acc = (float)(acc + part);
        }
        c.p[r * t->baseN + q] = (TC)acc;
      }
  }
  void End() { it = -1; hasA = hasB = hasBias = false; }
};
} /* namespace AscendC */
#define REGIST_MATMUL_OBJ(pipe, workspace, mm, tiling) (mm).Init((tiling), (pipe))
`
