// fuzz_forward.c - attn_forward (row path and tiled path) against attn_forward_naive.
//
// Input: 4 size bytes, an options byte, a flags byte, a workspace-offset byte, then
// (when the options ask for it) a byte saying what to break, the scale, q, k, v and the
// mask (fuzz.h). Checks: valid statuses, the right error for each broken precondition,
// NON_FINITE for NaN/Inf inputs, OVERFLOW only when plausible, equal statuses on both
// paths, the invariants of every successful result, and fast ≈ naive; then, with weights
// and without (the tiled kernel for m >= 32), the same status and close outputs.
#include "fuzz.h"

enum { COST_CAP = 40000 };  // n·m·(d_k + d_v): keeps one input well under a millisecond

typedef struct cfg {
    int n, m, d_k, d_v;
    int has_weights, has_workspace, has_mask, ws_offset;
    float scale;
    unsigned flags;
    int null_what;  // 0 none, 1 out, 2 q, 3 k, 4 v
} cfg;

static attn_status run(int naive, const cfg *c, float *out, float *weights, float *ws,
                       const float *q, const float *k, const float *v, const uint8_t *mask) {
    float *o = c->null_what == 1 ? NULL : out;
    const float *qq = c->null_what == 2 ? NULL : q, *kk = c->null_what == 3 ? NULL : k;
    const float *vv = c->null_what == 4 ? NULL : v;
    return (naive ? attn_forward_naive : attn_forward)(o, weights, ws, qq, kk, vv, mask,
                                                       c->n, c->m, c->d_k, c->d_v, c->scale, c->flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    cfg c = {0};
    c.n = 1 + fz_u8(&in) % 40;
    c.m = 1 + fz_u8(&in) % 150;
    c.d_k = 1 + fz_u8(&in) % 40;
    c.d_v = 1 + fz_u8(&in) % 40;
    if (c.n * c.m * (c.d_k + c.d_v) > COST_CAP) c.n = 1 + COST_CAP / (c.m * (c.d_k + c.d_v));
    uint8_t opt = fz_u8(&in);
    c.has_weights = opt & 1;
    c.has_workspace = ((opt >> 1) & 3) != 3;
    c.has_mask = (opt >> 3) & 1;
    int scale_mode = (opt >> 4) & 3;
    int breaking = (opt >> 6) == 3;
    c.flags = fz_flags(&in);
    c.ws_offset = 4 * (fz_u8(&in) & 3);

    // break one precondition: a dimension < 1, or a NULL input or output
    int an = c.n, am = c.m, adk = c.d_k, adv = c.d_v;  // allocation sizes stay valid
    if (breaking) {
        uint8_t what = fz_u8(&in) & 7;
        if (what < 4) {
            int bad = fz_bad_dim(&in);
            if (what == 0) c.n = bad; else if (what == 1) c.m = bad; else if (what == 2) c.d_k = bad; else c.d_v = bad;
        } else {
            c.null_what = what - 3;
        }
    }
    c.scale = fz_scale(&in, scale_mode, adk);

    float *q = fz_matrix(&in, (size_t)an * adk), *k = fz_matrix(&in, (size_t)am * adk);
    float *v = fz_matrix(&in, (size_t)am * adv);
    uint8_t *mask = c.has_mask ? fz_mask(&in, an, am) : NULL;
    size_t ws_bytes = attn_workspace_size(an, am, adk, adv);
    CHECK(ws_bytes >= sizeof(float), "attn_workspace_size(%d, %d, %d, %d) = %zu for valid sizes", an, am, adk, adv, ws_bytes);

    // exact sizes, so that AddressSanitizer sees any access past the end
    float *out_f = fz_output((size_t)an * adv), *out_n = fz_output((size_t)an * adv);
    float *w_f = c.has_weights ? fz_output((size_t)an * am) : NULL;
    float *w_n = c.has_weights ? fz_output((size_t)an * am) : NULL;
    char *ws_f_mem = c.has_workspace ? malloc(ws_bytes + c.ws_offset) : NULL;
    char *ws_n_mem = c.has_workspace ? malloc(ws_bytes + c.ws_offset) : NULL;
    float *ws_f = ws_f_mem ? (float *)(void *)(ws_f_mem + c.ws_offset) : NULL;
    float *ws_n = ws_n_mem ? (float *)(void *)(ws_n_mem + c.ws_offset) : NULL;

    if (fz_dumping()) {
        fprintf(stderr, "n %d m %d d_k %d d_v %d scale %.9g (bits %08x) flags %#x weights %s workspace %s (+%d) null %d\n",
                c.n, c.m, c.d_k, c.d_v, (double)c.scale, float_bits(c.scale), c.flags, c.has_weights ? "yes" : "NULL",
                c.has_workspace ? "yes" : "NULL", c.ws_offset, c.null_what);
        fz_dump("q", q, an, adk); fz_dump("k", k, am, adk); fz_dump("v", v, am, adv); fz_dump_mask(mask, an, am);
    }
    attn_status sf = run(0, &c, out_f, w_f, ws_f, q, k, v, mask);
    attn_status sn = run(1, &c, out_n, w_n, ws_n, q, k, v, mask);
    if (fz_dumping()) fprintf(stderr, "status: attn_forward %d, attn_forward_naive %d\n", sf, sn);
    CHECK(status_valid(sf) && status_valid(sn), "statuses %d (fast) and %d (naive)", sf, sn);

    int bad_null = c.null_what != 0 || (!c.has_weights && !c.has_workspace);
    int bad_size = c.n < 1 || c.m < 1 || c.d_k < 1 || c.d_v < 1;
    int bad_scale = !isfinite(c.scale) || c.scale < 0.0f;
    int bad_flags = (c.flags & ~ATTN_CAUSAL) != 0;
    const char *paths[2] = {"attn_forward", "attn_forward_naive"};
    attn_status st[2] = {sf, sn};
    for (int p = 0; p < 2; p++) {
        attn_status s = st[p];
        if (bad_null || bad_size || bad_scale || bad_flags) {
            CHECK((bad_null && s == ATTN_ERR_NULL) || (bad_size && s == ATTN_ERR_SIZE) ||
                  (bad_scale && s == ATTN_ERR_SCALE) || (bad_flags && s == ATTN_ERR_FLAGS),
                  "%s returned %d (%s); broken: null %d size %d (n %d m %d d_k %d d_v %d) scale %d (%g) flags %d (%#x)",
                  paths[p], s, attn_status_string(s), bad_null, bad_size, c.n, c.m, c.d_k, c.d_v,
                  bad_scale, (double)c.scale, bad_flags, c.flags);
        } else if (!all_finite(q, (size_t)an * adk) || !all_finite(k, (size_t)am * adk) || !all_finite(v, (size_t)am * adv)) {
            CHECK(s == ATTN_ERR_NON_FINITE, "%s returned %d (%s) for inputs holding NaN or Inf", paths[p], s, attn_status_string(s));
        } else {
            CHECK(s == ATTN_OK || s == ATTN_ERR_OVERFLOW, "%s returned %d (%s) for valid finite inputs", paths[p], s, attn_status_string(s));
            CHECK(s == ATTN_ERR_OVERFLOW || !must_overflow(q, k, an, am, adk, c.scale),
                  "%s returned %d (%s) although max‖q‖·max‖k‖·max(scale, 1) = %g >= FLT_MAX/2",
                  paths[p], s, attn_status_string(s), logits_bound(q, k, an, am, adk, c.scale));
            if (s == ATTN_ERR_OVERFLOW) {
                CHECK(overflow_plausible(q, k, v, an, am, adk, adv, c.scale),
                      "%s returned OVERFLOW for moderate inputs (scale %g, n %d m %d d_k %d d_v %d)",
                      paths[p], (double)c.scale, an, am, adk, adv);
            }
        }
    }
    const int ok_or_overflow = (sf == ATTN_OK && sn == ATTN_ERR_OVERFLOW) || (sf == ATTN_ERR_OVERFLOW && sn == ATTN_OK);
    CHECK(sf == sn || (ok_or_overflow && at_float_limit(v, (size_t)am * adv)),
          "attn_forward returned %d (%s) but attn_forward_naive %d (%s); weights %s, m %d",
          sf, attn_status_string(sf), sn, attn_status_string(sn), c.has_weights ? "yes" : "NULL", c.m);

    if (sf == ATTN_OK && sn == ATTN_OK) {
        check_attention_result("attn_forward", out_f, w_f, v, mask, c.n, c.m, c.d_v, c.flags);
        check_attention_result("attn_forward_naive", out_n, w_n, v, mask, c.n, c.m, c.d_v, c.flags);
        compare_attention("attn_forward vs attn_forward_naive", out_f, w_f, out_n, w_n, q, k, v, c.n, c.m, c.d_k, c.d_v, c.scale);

        // the other path: without weights (tiled for m >= 32) if we had weights, and vice versa
        float *out_o = fz_output((size_t)c.n * c.d_v);
        float *w_o = c.has_weights ? NULL : fz_output((size_t)c.n * c.m);
        char *ws_o_mem = c.has_weights ? malloc(ws_bytes + c.ws_offset) : NULL;
        float *ws_o = ws_o_mem ? (float *)(void *)(ws_o_mem + c.ws_offset) : NULL;
        attn_status so = attn_forward(out_o, w_o, ws_o, q, k, v, mask, c.n, c.m, c.d_k, c.d_v, c.scale, c.flags);
        CHECK(so == ATTN_OK, "attn_forward with weights %s returned %d (%s), with weights %s OK (m %d, max |v| %g)",
              w_o ? "given" : "NULL", so, attn_status_string(so), c.has_weights ? "given" : "NULL",
              c.m, max_abs(v, (size_t)c.m * c.d_v));
        check_attention_result("attn_forward (other path)", out_o, w_o, v, mask, c.n, c.m, c.d_v, c.flags);
        compare_attention("attn_forward with vs without weights", out_o, w_o, out_f, w_f, q, k, v, c.n, c.m, c.d_k, c.d_v, c.scale);
        free(out_o); free(w_o); free(ws_o_mem);
    }

    free(q); free(k); free(v); free(mask);
    free(out_f); free(out_n); free(w_f); free(w_n); free(ws_f_mem); free(ws_n_mem);
    return 0;
}
