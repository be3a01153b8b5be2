// fuzz_matmul.c - attn_matmul: out (n, p) = a (n, c) · b (c, p).
//
// Checks: valid statuses, ATTN_ERR_NULL / ATTN_ERR_SIZE for broken preconditions, never OK
// for NaN/Inf inputs (NON_FINITE), OVERFLOW only when
// a partial sum can really leave float32, and on OK every result finite and within
// (c + 2)·2⁻²³·Σ|a·b| of the product computed in double.
#include "fuzz.h"

enum { COST_CAP = 40000 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    int n = 1 + fz_u8(&in) % 48, c = 1 + fz_u8(&in) % 64, p = 1 + fz_u8(&in) % 48;
    while (n > 1 && n * c * p > COST_CAP) n /= 2;
    uint8_t opt = fz_u8(&in);
    int null_what = 0, bad_dim = 0;
    if ((opt & 15) == 15) {
        uint8_t b = fz_u8(&in);
        if (b & 1) null_what = 1 + (b >> 1) % 3; else bad_dim = 1 + (b >> 1) % 3;
    }
    float *a = fz_matrix(&in, (size_t)n * c), *b = fz_matrix(&in, (size_t)c * p), *out = fz_output((size_t)n * p);
    float *ptr[3] = {out, a, b};
    if (null_what) ptr[null_what - 1] = NULL;
    int dims[3] = {n, c, p};
    if (bad_dim) dims[bad_dim - 1] = fz_bad_dim(&in);
    if (fz_dumping()) {
        fprintf(stderr, "n %d c %d p %d null %d\n", dims[0], dims[1], dims[2], null_what);
        fz_dump("a", a, n, c); fz_dump("b", b, c, p);
    }
    attn_status s = attn_matmul(ptr[0], ptr[1], ptr[2], dims[0], dims[1], dims[2]);
    if (fz_dumping()) fprintf(stderr, "status %d\n", s);
    CHECK(status_valid(s), "status %d", s);
    if (null_what || bad_dim) {
        CHECK((null_what && s == ATTN_ERR_NULL) || (bad_dim && s == ATTN_ERR_SIZE),
              "attn_matmul returned %d (%s); NULL pointer #%d, size #%d = %d", s, attn_status_string(s),
              null_what, bad_dim, bad_dim ? dims[bad_dim - 1] : 0);
    } else if (!all_finite(a, (size_t)n * c) || !all_finite(b, (size_t)c * p)) {
        CHECK(s == ATTN_ERR_NON_FINITE,
              "attn_matmul returned %d (%s) for NaN/Inf inputs", s, attn_status_string(s));
    } else {
        CHECK(s == ATTN_OK || s == ATTN_ERR_OVERFLOW, "attn_matmul returned %d (%s) for finite inputs", s, attn_status_string(s));
        double worst = 0;  // the largest Σ|a·b|: partial sums stay below it
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < p; j++) {
                double dot = 0, abs = 0;
                for (int t = 0; t < c; t++) {
                    dot += (double)a[(size_t)i * c + t] * b[(size_t)t * p + j];
                    abs += fabs((double)a[(size_t)i * c + t] * b[(size_t)t * p + j]);
                }
                if (abs > worst) worst = abs;
                if (s != ATTN_OK) continue;
                float o = out[(size_t)i * p + j];
                double tol = (c + 2) * 0x1p-23 * abs + c * 0x1p-149;
                CHECK(isfinite(o), "out[%d][%d] = %g", i, j, (double)o);
                CHECK(fabs(o - dot) <= tol, "out[%d][%d] = %.9g, in double %.9g (tolerance %g)", i, j, (double)o, dot, tol);
            }
        }
        if (s == ATTN_ERR_OVERFLOW) {
            CHECK(worst >= (1 - 1e-5) * FLT_MAX, "attn_matmul returned OVERFLOW but every Σ|a·b| <= %g", worst);
        }
    }
    free(a); free(b); free(out);
    return 0;
}
