// harness.c - runs the native C core on cases read from stdin, for tests/native.test.js.
//
// Input, whitespace-separated, one case after another until EOF:
//   sdpa  n m d_k d_v scale flags has_mask  q... k... v... [mask...]
//   self  n d_model d_k d_v scale flags has_mask  x... wq... wk... wv... [mask...]
// (scale < 0 means the default 1/√d_k.) Output per case: "status S" then, when S is 0,
// every output matrix as "name rows cols v v v ..." with %.9g (exact for float32).
#include "attention.h"

#define HARNESS_NAME "harness"
#include "harness_io.h"

int main(void) {
    char kind[16];
    while (scanf("%15s", kind) == 1) {
        int n, m, dk, dv, has_mask;
        unsigned flags;
        float scale;
        if (strcmp(kind, "sdpa") == 0) {
            if (scanf("%d %d %d %d %f %u %d", &n, &m, &dk, &dv, &scale, &flags, &has_mask) != 7) return 2;
            float *q = readf((size_t)n * dk), *k = readf((size_t)m * dk), *v = readf((size_t)m * dv);
            uint8_t *mask = NULL;
            if (has_mask) {
                mask = malloc((size_t)n * m);
                for (size_t i = 0; i < (size_t)n * m; i++) { int b; if (scanf("%d", &b) != 1) return 2; mask[i] = (uint8_t)b; }
            }
            if (scale < 0) scale = attn_default_scale(dk);
            float *out = malloc((size_t)n * dv * 4), *w = malloc((size_t)n * m * 4);
            attn_status s = attn_forward(out, w, NULL, q, k, v, mask, n, m, dk, dv, scale, flags);
            printf("status %d\n", s);
            if (s == ATTN_OK) { put("weights", w, n, m); put("output", out, n, dv); }
            free(q); free(k); free(v); free(mask); free(out); free(w);
        } else if (strcmp(kind, "self") == 0) {
            int dm;
            if (scanf("%d %d %d %d %f %u %d", &n, &dm, &dk, &dv, &scale, &flags, &has_mask) != 7) return 2;
            float *x = readf((size_t)n * dm), *wq = readf((size_t)dm * dk), *wk = readf((size_t)dm * dk);
            float *wv = readf((size_t)dm * dv);
            uint8_t *mask = NULL;
            if (has_mask) {
                mask = malloc((size_t)n * n);
                for (size_t i = 0; i < (size_t)n * n; i++) { int b; if (scanf("%d", &b) != 1) return 2; mask[i] = (uint8_t)b; }
            }
            if (scale < 0) scale = attn_default_scale(dk);
            float *q = malloc((size_t)n * dk * 4), *k = malloc((size_t)n * dk * 4), *v = malloc((size_t)n * dv * 4);
            float *sc = malloc((size_t)n * n * 4), *sd = malloc((size_t)n * n * 4), *w = malloc((size_t)n * n * 4);
            float *out = malloc((size_t)n * dv * 4);
            attn_status s = attn_self_forward(q, k, v, sc, sd, w, out, x, wq, wk, wv, mask, n, dm, dk, dv, scale, flags);
            printf("status %d\n", s);
            if (s == ATTN_OK) {
                put("q", q, n, dk); put("k", k, n, dk); put("v", v, n, dv); put("scores", sc, n, n);
                put("scaled", sd, n, n); put("weights", w, n, n); put("output", out, n, dv);
            }
            free(x); free(wq); free(wk); free(wv); free(mask); free(q); free(k); free(v);
            free(sc); free(sd); free(w); free(out);
        } else {
            fprintf(stderr, "harness: unknown case kind %s\n", kind);
            return 2;
        }
    }
    return 0;
}
