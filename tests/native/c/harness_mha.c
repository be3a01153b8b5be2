// harness_mha.c - runs the native attn_mha_forward on cases read from stdin, for
// tests/native-mha.test.js.
//
// Input, whitespace-separated, one case after another until EOF:
//   mha n m d_model heads kv_heads scale flags has_kv has_bias has_mask want_weights
//       x... [kv...] wq... wk... wv... wo... [bq... bk... bv... bo...] [mask...]
// (scale < 0 means the default 1/√d_head.) Output per case: "status S" then, when S is 0,
// "output rows cols v...", "concat rows cols v..." and, when asked, "weights heads·n m v..."
// with %.9g (exact for float32).
#include "attention.h"

#define HARNESS_NAME "harness_mha"
#include "harness_io.h"

int main(void) {
    char kind[16];
    while (scanf("%15s", kind) == 1) {
        if (strcmp(kind, "mha") != 0) { fprintf(stderr, "harness_mha: unknown case kind %s\n", kind); return 2; }
        int n, m, dm, heads, kv_heads, has_kv, has_bias, has_mask, want_weights;
        unsigned flags;
        float scale;
        if (scanf("%d %d %d %d %d %f %u %d %d %d %d", &n, &m, &dm, &heads, &kv_heads, &scale, &flags,
                  &has_kv, &has_bias, &has_mask, &want_weights) != 11) return 2;
        if (n < 1 || m < 1 || dm < 1 || heads < 1 || kv_heads < 1 || dm % heads || heads % kv_heads) return 2;
        size_t dkv = (size_t)(dm / heads) * kv_heads;
        float *x = readf((size_t)n * dm), *kv = has_kv ? readf((size_t)m * dm) : NULL;
        float *wq = readf((size_t)dm * dm), *wk = readf((size_t)dm * dkv), *wv = readf((size_t)dm * dkv);
        float *wo = readf((size_t)dm * dm);
        float *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
        if (has_bias) { bq = readf((size_t)dm); bk = readf(dkv); bv = readf(dkv); bo = readf((size_t)dm); }
        uint8_t *mask = NULL;
        if (has_mask) {
            mask = malloc((size_t)n * m);
            for (size_t i = 0; i < (size_t)n * m; i++) { int b; if (scanf("%d", &b) != 1) return 2; mask[i] = (uint8_t)b; }
        }
        if (scale < 0) scale = attn_default_scale(dm / heads);
        float *out = malloc((size_t)n * dm * 4), *concat = malloc((size_t)n * dm * 4);
        float *w = want_weights ? malloc((size_t)heads * n * m * 4) : NULL;
        float *ws = malloc(attn_mha_workspace_size(n, m, dm, heads, kv_heads));
        attn_status s = attn_mha_forward(out, concat, w, ws, x, kv, wq, wk, wv, wo, bq, bk, bv, bo,
                                         mask, n, m, dm, heads, kv_heads, scale, flags);
        printf("status %d\n", s);
        if (s == ATTN_OK) {
            put("output", out, n, dm);
            put("concat", concat, n, dm);
            if (w) put("weights", w, heads * n, m);
        }
        free(x); free(kv); free(wq); free(wk); free(wv); free(wo); free(bq); free(bk); free(bv); free(bo);
        free(mask); free(out); free(concat); free(w); free(ws);
    }
    return 0;
}
