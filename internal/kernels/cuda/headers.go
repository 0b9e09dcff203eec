package cuda

import "gkconv/internal/kernels"

// DeviceHeader is what the generated source needs from CUDA when compiled
// by clang with -nocudainc: attribute macros, special registers through
// clang's NVVM builtins (__syncthreads is itself a clang builtin) and
// fixed-width integer types. It is skipped when GK_HOST_EMULATION is set.
const DeviceHeader = `#ifndef GK_HOST_EMULATION
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define GK_TID_X ((int)__nvvm_read_ptx_sreg_tid_x())
#define GK_BID_X ((int)__nvvm_read_ptx_sreg_ctaid_x())
#define GK_BDIM_X ((int)__nvvm_read_ptx_sreg_ntid_x())
#define GK_GDIM_X ((int)__nvvm_read_ptx_sreg_nctaid_x())
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#endif
`

// MathHeader is the device math (kernels.DeviceMath) with its functions
// declared as inline device functions.
const MathHeader = "#define GK_DEV static __device__ __forceinline__\n" + kernels.DeviceMath

// HostHeader emulates the CUDA execution model on the host for
// verification (compile the kernel source as C++ with -DGK_HOST_EMULATION
// and this text included first). Blocks run one after another; the threads
// of a block are ucontext coroutines, and __syncthreads switches back to a
// scheduler that resumes every thread in turn, so each barrier interval
// runs to completion for all threads before any passes the barrier: the
// CUDA semantics for barrier-uniform code. Shared memory is a static
// variable (one block at a time); registers live on each coroutine's stack.
const HostHeader = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
struct gk_dim3 { int x, y, z; };
static gk_dim3 gk_tid, gk_bid, gk_bdim, gk_gdim;
#define GK_TID_X (gk_tid.x)
#define GK_BID_X (gk_bid.x)
#define GK_BDIM_X (gk_bdim.x)
#define GK_GDIM_X (gk_gdim.x)
#define __global__
#define __device__
#define __shared__ static
#define __forceinline__ inline
static ucontext_t gk_sched;
static ucontext_t *gk_ctx;
static unsigned char *gk_done;
static int gk_cur;
static void (*gk_body)(void);
static int gk_syncs;
static inline void __syncthreads(void) { gk_syncs++; swapcontext(&gk_ctx[gk_cur], &gk_sched); }
static void gk_trampoline(void) { gk_body(); gk_done[gk_cur] = 1; }
/* gk_launch runs body as a grid of grid x block threads (x dimension);
   it returns non-zero when the threads of a block disagree on barriers. */
static int gk_launch(int grid, int block, void (*body)(void)) {
  enum { STACK = 256 * 1024 };
  gk_body = body;
  gk_gdim.x = grid; gk_gdim.y = gk_gdim.z = 1;
  gk_bdim.x = block; gk_bdim.y = gk_bdim.z = 1;
  gk_tid.y = gk_tid.z = gk_bid.y = gk_bid.z = 0;
  gk_ctx = (ucontext_t *)calloc(block, sizeof(ucontext_t));
  gk_done = (unsigned char *)calloc(block, 1);
  char *stacks = (char *)malloc((size_t)block * STACK);
  if (!gk_ctx || !gk_done || !stacks) { fputs("gk_launch: out of memory\n", stderr); return 2; }
  int rc = 0;
  for (int b = 0; b < grid && rc == 0; b++) {
    gk_bid.x = b;
    for (int t = 0; t < block; t++) {
      getcontext(&gk_ctx[t]);
      gk_ctx[t].uc_stack.ss_sp = stacks + (size_t)t * STACK;
      gk_ctx[t].uc_stack.ss_size = STACK;
      gk_ctx[t].uc_link = &gk_sched;
      makecontext(&gk_ctx[t], gk_trampoline, 0);
      gk_done[t] = 0;
    }
    for (;;) {
      int finished = 0;
      for (int t = 0; t < block; t++) {
        if (gk_done[t]) { finished++; continue; }
        gk_cur = t; gk_tid.x = t;
        swapcontext(&gk_sched, &gk_ctx[t]);
        if (gk_done[t]) finished++;
      }
      if (finished == block) break;
      if (finished > 0) { fprintf(stderr, "gk_launch: block %d: threads diverge at a barrier\n", b); rc = 1; break; }
    }
  }
  free(stacks); free(gk_ctx); free(gk_done);
  return rc;
}
`
