#ifndef GKCONV_NN_ATTENTION_H
#define GKCONV_NN_ATTENTION_H
// One (batch, head) of scaled dot-product attention in float32 (ONNX
// Attention semantics). Q is sq x d, K is skv x d, V is skv x dv, Y is
// sq x dv, each row-major with its own row stride. The score block
// (sq x skv) lives in the caller's scratch. Row i attends key j when:
//   j < mask_cols (a shorter mask pads with "masked out"), the mask allows it
//   (bool: nonzero; float: added), !causal || j <= i + causal_off, and
//   j < kv_valid. A row with no key left gives probabilities 0 and Y row 0.
typedef struct {
    int sq, skv, d, dv;
    const float *q;
    long ldq;
    const float *k;
    long ldk;
    const float *v;
    long ldv;
    float *y;
    long ldy;
    const float *mask_f;         // additive mask rows (NULL: none)
    const unsigned char *mask_b; // boolean mask rows (NULL: none)
    long mask_ld;                // mask row stride (0: one row for all queries)
    int mask_cols;               // mask columns present (<= skv)
    float scale;                 // applied to Q*K^T
    float softcap;               // > 0: softcap * tanh(s / softcap)
    int causal;
    long causal_off;
    int kv_valid;   // keys at or after this index are masked out
    float *qk;      // NULL, or the sq x skv block of qk_matmul_output
    int qk_mode;    // 0 raw scaled QK^T, 1 after softcap, 2 after mask, 3 softmax
    float *scores;  // scratch, sq * skv floats
} gk_attn_head;

void gk_attention_head(const gk_attn_head *a);
#endif
