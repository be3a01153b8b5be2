// fuzz_rows.c - attn_forward_rows: row ranges, valid and invalid.
//
// The contract (attention.h): rows [row_begin, row_end) of attn_forward, "the same results
// for those query rows; other rows are not touched", 0 <= row_begin < row_end <= n.
// Checks: an invalid range gives ATTN_ERR_SIZE (or another precondition error) and touches
// nothing; one valid range touches only its rows; the rows of a random split into ranges,
// run one after another, are bit-identical to one attn_forward call, with and without weights.
#include "fuzz.h"

enum { COST_CAP = 40000 };

static int touched_outside(const float *x, int rows, int cols, int begin, int end) {
    for (int i = 0; i < rows; i++) {
        if (i >= begin && i < end) continue;
        for (int c = 0; c < cols; c++) if (float_bits(x[(size_t)i * cols + c]) != FZ_CANARY) return i;
    }
    return -1;
}

static int all_canary(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++) if (float_bits(x[i]) != FZ_CANARY) return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    int n = 1 + fz_u8(&in) % 48, m = 1 + fz_u8(&in) % 140, d_k = 1 + fz_u8(&in) % 24, d_v = 1 + fz_u8(&in) % 24;
    if (n * m * (d_k + d_v) > COST_CAP) n = 1 + COST_CAP / (m * (d_k + d_v));
    uint8_t opt = fz_u8(&in);
    int with_weights = opt & 1, with_mask = (opt >> 1) & 1;
    float scale = fz_scale(&in, (opt >> 2) & 3, d_k);
    unsigned flags = fz_flags(&in);

    // the range to check alone: valid or not (negative, empty, reversed, past n, extremes)
    static const int EXTREME[] = {-1, 0, -2147483647 - 1, 2147483647, 1, -7};
    int begin, end;
    uint8_t rb = fz_u8(&in);
    switch (rb & 7) {
    case 0: begin = -1 - fz_u8(&in) % 3; end = 1 + fz_u8(&in) % n; break;   // begin < 0
    case 1: begin = fz_u8(&in) % n; end = n + 1 + fz_u8(&in) % 3; break;   // end > n
    case 2: begin = fz_u8(&in) % n; end = begin; break;                     // empty
    case 3: end = fz_u8(&in) % n; begin = end + 1 + fz_u8(&in) % 2; break;  // reversed
    case 4: begin = EXTREME[fz_u8(&in) % 6]; end = EXTREME[fz_u8(&in) % 6]; break;
    default: begin = fz_u8(&in) % n; end = begin + 1 + fz_u8(&in) % (n - begin); break;
    }
    int valid_range = begin >= 0 && end <= n && begin < end;

    float *q = fz_matrix(&in, (size_t)n * d_k), *k = fz_matrix(&in, (size_t)m * d_k), *v = fz_matrix(&in, (size_t)m * d_v);
    uint8_t *mask = with_mask ? fz_mask(&in, n, m) : NULL;
    size_t ws_bytes = attn_workspace_size(n, m, d_k, d_v);
    float *ws = malloc(ws_bytes);
    int bad_scale = !isfinite(scale) || scale < 0.0f, bad_flags = (flags & ~ATTN_CAUSAL) != 0;
    int finite = all_finite(q, (size_t)n * d_k) && all_finite(k, (size_t)m * d_k) && all_finite(v, (size_t)m * d_v);
    if (fz_dumping()) {
        fprintf(stderr, "n %d m %d d_k %d d_v %d scale %.9g flags %#x weights %d range [%d, %d)\n",
                n, m, d_k, d_v, (double)scale, flags, with_weights, begin, end);
        fz_dump("q", q, n, d_k); fz_dump("k", k, m, d_k); fz_dump("v", v, m, d_v); fz_dump_mask(mask, n, m);
    }

    // 1. the range alone, on canary buffers
    float *out = fz_output((size_t)n * d_v), *w = with_weights ? fz_output((size_t)n * m) : NULL;
    attn_status s = attn_forward_rows(out, w, ws, q, k, v, mask, n, m, d_k, d_v, scale, flags, begin, end);
    CHECK(status_valid(s), "status %d", s);
    if (!valid_range || bad_scale || bad_flags) {
        CHECK((!valid_range && s == ATTN_ERR_SIZE) || (bad_scale && s == ATTN_ERR_SCALE) || (bad_flags && s == ATTN_ERR_FLAGS),
              "attn_forward_rows [%d, %d) of n = %d, scale %g, flags %#x returned %d (%s)",
              begin, end, n, (double)scale, flags, s, attn_status_string(s));
        CHECK(all_canary(out, (size_t)n * d_v) && (!w || all_canary(w, (size_t)n * m)),
              "attn_forward_rows [%d, %d) failed with %d but wrote to its outputs", begin, end, s);
    } else if (!finite) {
        CHECK(s == ATTN_ERR_NON_FINITE, "attn_forward_rows returned %d (%s) for NaN/Inf inputs", s, attn_status_string(s));
    } else {
        CHECK(s == ATTN_OK || (s == ATTN_ERR_OVERFLOW && overflow_plausible(q, k, v, n, m, d_k, d_v, scale)),
              "attn_forward_rows returned %d (%s) for valid finite inputs", s, attn_status_string(s));
        CHECK(s == ATTN_ERR_OVERFLOW || !must_overflow(q, k, n, m, d_k, scale),
              "attn_forward_rows [%d, %d) returned %d (%s) although the logits bound is >= FLT_MAX/2", begin, end, s, attn_status_string(s));
        int row = touched_outside(out, n, d_v, begin, end);
        CHECK(row < 0, "attn_forward_rows [%d, %d) wrote out row %d", begin, end, row);
        if (w) {
            row = touched_outside(w, n, m, begin, end);
            CHECK(row < 0, "attn_forward_rows [%d, %d) wrote weights row %d", begin, end, row);
        }
        // the same bits as those rows of attn_forward
        float *out1 = fz_output((size_t)n * d_v), *w1 = with_weights ? fz_output((size_t)n * m) : NULL;
        attn_status s1 = attn_forward(out1, w1, ws, q, k, v, mask, n, m, d_k, d_v, scale, flags);
        if (s1 == ATTN_OK) {
            CHECK(s == ATTN_OK, "attn_forward OK but attn_forward_rows [%d, %d) returned %d", begin, end, s);
            CHECK(memcmp(out + (size_t)begin * d_v, out1 + (size_t)begin * d_v, (size_t)(end - begin) * d_v * sizeof *out) == 0,
                  "out rows [%d, %d) differ from attn_forward's", begin, end);
            if (w) CHECK(memcmp(w + (size_t)begin * m, w1 + (size_t)begin * m, (size_t)(end - begin) * m * sizeof *w) == 0,
                         "weights rows [%d, %d) differ from attn_forward's", begin, end);
        }
        free(out1); free(w1);
    }

    // 2. a random split into ranges, against one attn_forward call: the same bits
    if (!bad_scale && !bad_flags && finite) {
        float *out1 = fz_output((size_t)n * d_v), *w1 = with_weights ? fz_output((size_t)n * m) : NULL;
        float *out2 = fz_output((size_t)n * d_v), *w2 = with_weights ? fz_output((size_t)n * m) : NULL;
        attn_status s1 = attn_forward(out1, w1, ws, q, k, v, mask, n, m, d_k, d_v, scale, flags);
        int overflowed = 0;
        for (int b = 0; b < n;) {
            int len = 1 + fz_u8(&in) % (n - b < 20 ? n - b : 20);
            attn_status s2 = attn_forward_rows(out2, w2, ws, q, k, v, mask, n, m, d_k, d_v, scale, flags, b, b + len);
            if (s1 == ATTN_OK) {
                CHECK(s2 == ATTN_OK,
                      "attn_forward OK but attn_forward_rows [%d, %d) returned %d (%s)", b, b + len, s2, attn_status_string(s2));
            } else {
                CHECK(s1 == ATTN_ERR_OVERFLOW && (s2 == ATTN_OK || s2 == ATTN_ERR_OVERFLOW),
                      "attn_forward returned %d, attn_forward_rows [%d, %d) %d", s1, b, b + len, s2);
            }
            overflowed |= s2 == ATTN_ERR_OVERFLOW;
            b += len;
        }
        if (s1 == ATTN_OK) {
            check_attention_result("attn_forward", out1, w1, v, mask, n, m, d_v, flags);
            CHECK(memcmp(out1, out2, (size_t)n * d_v * sizeof *out1) == 0, "out of the split rows differs from attn_forward (not the same bits)");
            if (w1) CHECK(memcmp(w1, w2, (size_t)n * m * sizeof *w1) == 0, "weights of the split rows differ from attn_forward");
        } else {
            CHECK(overflowed, "attn_forward returned OVERFLOW but no range of the split did");
        }
        free(out1); free(w1); free(out2); free(w2);
    }

    free(q); free(k); free(v); free(mask); free(ws); free(out); free(w);
    return 0;
}
