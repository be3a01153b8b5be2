// fuzz_api.c - the entry points that take no data, and every entry point with extreme sizes.
//
//   attn_status_string   any int: never NULL, a short printable sentence; the eight statuses
//                        have eight different sentences, none of them the unknown one;
//   attn_default_scale   any int: 0 below 1, else 1/√d_k within 2 ulp;
//   attn_workspace_size  any four ints: 0 when a size is < 1; otherwise at least m floats,
//                        O(m·(d_k + d_v)), never n×m;
//   attn_forward, attn_forward_naive, attn_forward_rows, attn_self_forward, attn_matmul with
//                        sizes anywhere in int (INT_MIN..INT_MAX), any scale bits, any flags
//                        and row range, but every buffer NULL, or 64-byte buffers and a size < 1:
//                        never ATTN_OK, never a read or write (AddressSanitizer), no signed
//                        overflow in the size arithmetic (UndefinedBehaviorSanitizer);
//   attn_rope            any sizes, base and position (see fuzz_rope);
//   attn_rope_frequencies, attn_rope_table, attn_rope_rotate: the same, piece by piece, with any
//                        scaling numbers and flags (see fuzz_rope_pieces).
#include "fuzz.h"

#include <ctype.h>
#include <limits.h>

static int fz_int(fz *in) {
    static const int EDGE[] = {0, 1, -1, 2, INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1, 32, 31, 33,
                               65536, 46341, 46340, 1 << 30, -(1 << 30), 0x10000001, 16, 64, 8};
    uint8_t b = fz_u8(in);
    if (b < 128) return EDGE[b % (sizeof EDGE / sizeof EDGE[0])];
    if (b < 192) return (int)(b - 160);
    return (int)fz_u32(in);
}

// attn_rope with sizes, base and position anywhere: NULL buffers are refused before any access;
// with at most 16 values (exact-size buffers), a status of its list, and when OK every output
// finite and every pair (x[i], x[i + d/2]) as long as before, to float rounding (a rotation)
static void fuzz_rope(fz *in) {
    const int n = fz_int(in), heads = fz_int(in), d = fz_int(in), pos0 = fz_int(in);
    const float base = fz_u8(in) < 192 ? (float)(1 + fz_u8(in)) * 1000.0f : bits_to_float(fz_u32(in));
    attn_status st = attn_rope(NULL, NULL, NULL, n, heads, d, base, pos0);
    CHECK(st != ATTN_OK && st >= ATTN_ERR_NULL && st <= ATTN_ERR_RANGE, "attn_rope with NULL buffers returned %d", st);
    if (n < 1 || heads < 1 || d < 1 || n > 16 || heads > 16 || d > 16 || n * heads * d > 16) return;
    const size_t count = (size_t)n * (size_t)heads * (size_t)d;
    float *x = fz_matrix(in, count), *out = fz_output(count), *theta = fz_output((size_t)(d / 2 > 0 ? d / 2 : 1));
    st = attn_rope(out, theta, x, n, heads, d, base, pos0);
    CHECK(st >= ATTN_OK && st <= ATTN_ERR_RANGE && st != ATTN_ERR_SCALE && st != ATTN_ERR_FLAGS, "attn_rope returned %d", st);
    if (st == ATTN_OK) {
        CHECK(all_finite(out, count), "attn_rope: an output is not finite");
        for (size_t r = 0; r < count / (size_t)d; r++) {
            for (int i = 0; i < d / 2; i++) {
                const float *a = x + r * (size_t)d, *b = out + r * (size_t)d;
                const double before = hypot(a[i], a[i + d / 2]), after = hypot(b[i], b[i + d / 2]);
                CHECK(fabs(after - before) <= 4e-7 * before + 1e-37, "attn_rope: pair %d of row %zu: length %g became %g", i, r, before, after);
            }
        }
    }
    free(x); free(out); free(theta);
}

// the three pieces of RoPE: NULL buffers refused before any access; with small sizes, a status
// of its list; frequencies finite and in [0, 1], a table of cosines and sines of length 1 within
// float rounding, and a rotation (either pairing) that keeps each pair's length
// RoPE's statuses: status_valid's, and ATTN_ERR_RANGE (a base, position or factor out of range)
static int rope_status(attn_status s) { return s >= ATTN_OK && s <= ATTN_ERR_RANGE; }

static void fuzz_rope_pieces(fz *in) {
    const int n = fz_int(in), heads = fz_int(in), d = fz_int(in), pos0 = fz_int(in);
    const unsigned flags = fz_u8(in) < 200 ? ATTN_ROPE_INTERLEAVED * (fz_u8(in) & 1) : fz_u32(in);
    const double base = fz_u8(in) < 192 ? (1 + fz_u8(in)) * 1000.0 : (double)bits_to_float(fz_u32(in));
    attn_rope_scaling sc = {bits_to_float(fz_u32(in)), bits_to_float(fz_u32(in)), bits_to_float(fz_u32(in)), fz_int(in)};
    if (fz_u8(in) < 128) sc = (attn_rope_scaling){8.0, 1.0, 4.0, 8192};
    const attn_rope_scaling *scaling = fz_u8(in) & 1 ? &sc : NULL;
    attn_status st = attn_rope_frequencies(NULL, d, base, scaling);
    CHECK(st != ATTN_OK && rope_status(st), "attn_rope_frequencies with NULL returned %d", st);
    st = attn_rope_table(NULL, NULL, NULL, n, d / 2, pos0);
    CHECK(st != ATTN_OK && rope_status(st), "attn_rope_table with NULL returned %d", st);
    st = attn_rope_rotate(NULL, NULL, NULL, NULL, n, heads, d, flags);
    CHECK(st != ATTN_OK && rope_status(st), "attn_rope_rotate with NULL returned %d", st);
    if (n < 1 || heads < 1 || d < 2 || d % 2 || n > 16 || heads > 16 || d > 16 || n * heads * d > 16) return;
    const int half = d / 2;
    const size_t count = (size_t)n * (size_t)heads * (size_t)d;
    float *theta = fz_output((size_t)half), *cs = fz_output((size_t)n * half), *sn = fz_output((size_t)n * half);
    float *x = fz_matrix(in, count), *out = fz_output(count);
    st = attn_rope_frequencies(theta, d, base, scaling);
    CHECK(rope_status(st), "attn_rope_frequencies returned %d", st);
    if (st == ATTN_OK) {
        for (int i = 0; i < half; i++) CHECK(theta[i] >= 0.0f && theta[i] <= 1.0f, "theta[%d] = %g is outside [0, 1]", i, theta[i]);
        st = attn_rope_table(cs, sn, theta, n, half, pos0);
        CHECK(rope_status(st), "attn_rope_table returned %d", st);
    }
    if (st == ATTN_OK) {
        for (size_t k = 0; k < (size_t)n * half; k++) CHECK(fabs(hypot(cs[k], sn[k]) - 1.0) <= 1e-6, "cos² + sin² of entry %zu is not 1", k);
        st = attn_rope_rotate(out, x, cs, sn, n, heads, d, flags);
        CHECK(rope_status(st), "attn_rope_rotate returned %d", st);
        if (st == ATTN_OK) {
            CHECK(flags == 0 || flags == ATTN_ROPE_INTERLEAVED, "attn_rope_rotate took flags %u", flags);
            const int stride = flags ? 1 : half, step = flags ? 2 : 1;
            for (size_t r = 0; r < count / (size_t)d; r++) {
                for (int i = 0; i < half; i++) {
                    const int a = i * step, b = a + stride;
                    const float *u = x + r * (size_t)d, *v = out + r * (size_t)d;
                    const double before = hypot(u[a], u[b]), after = hypot(v[a], v[b]);
                    CHECK(fabs(after - before) <= 4e-7 * before + 1e-37, "attn_rope_rotate: pair %d of row %zu: length %g became %g", i, r, before, after);
                }
            }
        }
    }
    free(theta); free(cs); free(sn); free(x); free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);

    // attn_status_string
    static const char *seen[ATTN_ERR_FLAGS + 1];
    const char *unknown = attn_status_string((attn_status)-1);
    CHECK(unknown != NULL, "attn_status_string(-1) is NULL");
    for (int st = ATTN_OK; st <= ATTN_ERR_FLAGS; st++) {
        const char *msg = attn_status_string((attn_status)st);
        CHECK(msg && *msg && strcmp(msg, unknown) != 0, "attn_status_string(%d) = \"%s\"", st, msg ? msg : "(null)");
        for (int o = ATTN_OK; o < st; o++) CHECK(strcmp(msg, attn_status_string((attn_status)o)) != 0, "statuses %d and %d share \"%s\"", o, st, msg);
        if (!seen[st]) seen[st] = msg;
        CHECK(seen[st] == msg || strcmp(seen[st], msg) == 0, "attn_status_string(%d) changed", st);
    }
    int any = fz_int(&in);
    const char *msg = attn_status_string((attn_status)any);
    CHECK(msg != NULL, "attn_status_string(%d) is NULL", any);
    size_t len = strlen(msg);
    CHECK(len > 0 && len < 200, "attn_status_string(%d) has %zu characters", any, len);
    for (size_t i = 0; i < len; i++) CHECK(isprint((unsigned char)msg[i]), "attn_status_string(%d) holds byte %#x", any, msg[i]);

    // attn_default_scale
    int dk = fz_int(&in);
    float sc = attn_default_scale(dk);
    if (dk < 1) {
        CHECK(sc == 0.0f, "attn_default_scale(%d) = %g, expected 0", dk, (double)sc);
    } else {
        double want = 1.0 / sqrt((double)dk);
        CHECK(isfinite(sc) && sc > 0 && fabs(sc - want) <= 2 * want * 0x1p-23, "attn_default_scale(%d) = %.9g, 1/√d_k = %.9g", dk, (double)sc, want);
    }

    // attn_workspace_size
    int n = fz_int(&in), m = fz_int(&in), d_k = fz_int(&in), d_v = fz_int(&in);
    size_t ws = attn_workspace_size(n, m, d_k, d_v);
    if (n < 1 || m < 1 || d_k < 1 || d_v < 1) {
        CHECK(ws == 0, "attn_workspace_size(%d, %d, %d, %d) = %zu for a size < 1", n, m, d_k, d_v, ws);
    } else if (ws != 0) {  // 0 is also the answer for sizes too large for size_t
        double bound = 64.0 * ((double)m + 64) * ((double)d_k + d_v + 16) + (1 << 20);
        CHECK(ws >= (size_t)m * sizeof(float), "attn_workspace_size(%d, %d, %d, %d) = %zu < m floats", n, m, d_k, d_v, ws);
        CHECK((double)ws <= bound, "attn_workspace_size(%d, %d, %d, %d) = %zu is not O(m·(d_k + d_v))", n, m, d_k, d_v, ws);
        CHECK(ws % sizeof(float) == 0, "attn_workspace_size = %zu is not a whole number of floats", ws);
    } else {
        // refused as too large: only plausible when m·d is near the size_t limit
        CHECK((double)m * ((double)d_k + d_v) >= 0x1p56, "attn_workspace_size(%d, %d, %d, %d) = 0 for sizes that fit", n, m, d_k, d_v);
    }

    // every computing entry point with extreme sizes
    float scale = bits_to_float(fz_u32(&in));
    unsigned flags = fz_u8(&in) & 1 ? fz_u32(&in) : 0u;
    int begin = fz_int(&in), end = fz_int(&in), dm = fz_int(&in);
    uint8_t mode = fz_u8(&in);
    if (mode & 1) {  // everything NULL, any sizes
        attn_status s[5] = {
            attn_forward(NULL, NULL, NULL, NULL, NULL, NULL, NULL, n, m, d_k, d_v, scale, flags),
            attn_forward_naive(NULL, NULL, NULL, NULL, NULL, NULL, NULL, n, m, d_k, d_v, scale, flags),
            attn_forward_rows(NULL, NULL, NULL, NULL, NULL, NULL, NULL, n, m, d_k, d_v, scale, flags, begin, end),
            attn_self_forward(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, n, dm, d_k, d_v, scale, flags),
            attn_matmul(NULL, NULL, NULL, n, m, d_k),
        };
        for (int i = 0; i < 5; i++) CHECK(status_valid(s[i]) && s[i] != ATTN_OK, "entry point #%d returned %d with NULL buffers", i, s[i]);
    } else {  // 64-byte buffers and at least one size < 1: must be refused before any access
        float *buf[12];
        for (int i = 0; i < 12; i++) buf[i] = fz_output(16);
        uint8_t *mask = calloc(64, 1);
        int which = fz_u8(&in) % 5, bad = fz_bad_dim(&in);
        if (which == 0) n = bad; else if (which == 1) m = bad; else if (which == 2) d_k = bad; else if (which == 3) d_v = bad; else dm = bad;
        // d_model is not a size of the first three: with which == 4 their sizes may all be valid
        // and larger than these buffers, so they are not called (that would be a harness overrun)
        int fwd = which != 4;
        attn_status s[5] = {
            fwd ? attn_forward(buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], mask, n, m, d_k, d_v, scale, flags) : ATTN_ERR_SIZE,
            fwd ? attn_forward_naive(buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], mask, n, m, d_k, d_v, scale, flags) : ATTN_ERR_SIZE,
            fwd ? attn_forward_rows(buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], mask, n, m, d_k, d_v, scale, flags, begin, end) : ATTN_ERR_SIZE,
            // d_model is bad for "m" and "d_model"; matmul's (n, c, p) is (n, m or bad, d_k or d_v)
            attn_self_forward(buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7], buf[8], buf[9], buf[10], mask,
                              n, which == 1 || which == 4 ? bad : dm, d_k, d_v, scale, flags),
            attn_matmul(buf[0], buf[1], buf[2], n, which == 1 || which == 4 ? bad : m, which == 3 ? d_v : d_k),
        };
        for (int i = 0; i < 5; i++) {
            if (i < 3 && which == 4) continue;  // not called, see above
            CHECK(status_valid(s[i]) && s[i] != ATTN_OK, "entry point #%d returned %d with a size < 1", i, s[i]);
        }
        for (int i = 0; i < 12; i++) {
            for (int j = 0; j < 16; j++) CHECK(float_bits(buf[i][j]) == FZ_CANARY, "buffer %d written although a size is < 1", i);
            free(buf[i]);
        }
        free(mask);
    }
    fuzz_rope(&in);
    fuzz_rope_pieces(&in);
    return 0;
}
