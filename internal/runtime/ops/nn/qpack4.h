#ifndef GKCONV_QPACK4_H
#define GKCONV_QPACK4_H
// gk_interleave4x16: 16 bytes of each of four rows (a, b, d, f, already in
// packed int8 form) interleaved into 16 little-endian words (byte t of word
// j from row t: the 4-deep groups vpdpbusd reads) at dst, and each word's
// signed byte sum added to sums[0..16) (SSE2).
#include <emmintrin.h>
#include <stdint.h>
static inline __attribute__((always_inline)) void gk_interleave4x16(__m128i a, __m128i b, __m128i d, __m128i f,
                                                                     void *dst, int32_t *sums) {
    __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
    __m128i df0 = _mm_unpacklo_epi8(d, f), df1 = _mm_unpackhi_epi8(d, f);
    __m128i *o = (__m128i *)dst;
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(ab0, df0));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab0, df0));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab1, df1));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab1, df1));
#define GK_SX16LO(v) _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8)
#define GK_SX16HI(v) _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8)
    __m128i s0 = _mm_add_epi16(_mm_add_epi16(GK_SX16LO(a), GK_SX16LO(b)), _mm_add_epi16(GK_SX16LO(d), GK_SX16LO(f)));
    __m128i s1 = _mm_add_epi16(_mm_add_epi16(GK_SX16HI(a), GK_SX16HI(b)), _mm_add_epi16(GK_SX16HI(d), GK_SX16HI(f)));
#undef GK_SX16LO
#undef GK_SX16HI
    __m128i *c = (__m128i *)sums;
    _mm_storeu_si128(c + 0, _mm_add_epi32(_mm_loadu_si128(c + 0), _mm_srai_epi32(_mm_unpacklo_epi16(s0, s0), 16)));
    _mm_storeu_si128(c + 1, _mm_add_epi32(_mm_loadu_si128(c + 1), _mm_srai_epi32(_mm_unpackhi_epi16(s0, s0), 16)));
    _mm_storeu_si128(c + 2, _mm_add_epi32(_mm_loadu_si128(c + 2), _mm_srai_epi32(_mm_unpacklo_epi16(s1, s1), 16)));
    _mm_storeu_si128(c + 3, _mm_add_epi32(_mm_loadu_si128(c + 3), _mm_srai_epi32(_mm_unpackhi_epi16(s1, s1), 16)));
}
#endif
