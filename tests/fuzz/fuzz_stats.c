// fuzz_stats.c - the rows' statistics (attn_forward_stats, attn_row_stats_naive) and the heads'
// entry points beside them (attn_heads_keep_floats, attn_heads_map_floats, attn_heads_map).
//
// The contract (attention.h): attn_forward_stats is attn_forward_rows plus, for rows
// [row_begin, row_end), each row's entropy, distance and the weights at its points; "any
// positions, finite; a point outside [-1, m): ATTN_ERR_RANGE"; "a row whose keys are all masked
// gets 0 in every statistic"; attn_row_stats_naive is the same from the weights. The heads'
// sizes are 0 for a size < 1; attn_heads_map gives the bits of attn_forward's weights for one
// head, from a decoder's cache (causal, from position 0) or an encoder's keys under its key mask.
//
// Byte 0 picks the part (% 8): 0-4 attn_forward_stats, 5 the heads' sizes, 6-7 attn_heads_map.
//
// attn_forward_stats: n-1 m-1 d_k-1 d_v-1 | opt: bit0 weights, bit1 mask, bits2-3 scale mode,
// bit4 stats NULL, bits5-7 a member NULL (1 out, 2 qpos, 3 kpos, 4 points) | [scale] | flags |
// range kind (% 16: 0-4 invalid as in fuzz_rows, else valid) + 2 bytes | qpos kind [matrix] |
// kpos kind [matrix] | points mode, S, one byte per point [where, bad value] | q k v [mask].
// Checks: each broken precondition gives its status (SIZE, SCALE, FLAGS, NULL, NON_FINITE,
// RANGE), and a refused argument writes nothing (as fuzz_rows' ranges); OK or a plausible
// OVERFLOW otherwise; on OK out and weights are attn_forward_rows's bits, stats->out is written
// in the range's rows only, each row passes the invariants (finite (positions beyond
// ±ATTN_MAX_POSITION are refused: RANGE); entropy in [0, log2 keys], distance a convex combination,
// points' weights in [0, 1] and exactly 0 for -1 and masked keys, all 0 for a fully masked row),
// and agrees with attn_row_stats_naive on attn_forward's weights, which in turn agrees with the
// definitions summed here in double.
//
// The heads' sizes: T m H d from a table of edges (INT_MIN .. INT_MAX) or raw bits. 0 for a size
// < 1; else at least what the header implies, and no more floats than size_t holds in bytes.
//
// attn_heads_map: L-1 H-1 G index d-1 T-1 | opt: bit0 decoder, bit1 key mask, bits2-6 what to
// break (>= 16: kind - 16) | m-T S-m l i | bad value | queries, cache (2·L, G, S, d) or keys
// (L, G, m, d) | [key mask mode, bits] | values. Checks: the header's statuses (a NULL pointer
// ATTN_ERR_NULL; l, i, G, H, T, m, S out of range, a decoder's m != T ATTN_ERR_RANGE; d < 1
// ATTN_ERR_SIZE), none writing to weights or workspace; a valid call (a workspace of exactly
// attn_heads_map_floats floats) gives attn_forward's status and weights' bits on the same q and
// k with the header's mask and flags.
#include "fuzz.h"

#include <limits.h>

enum { COST_CAP = 40000 };

static int all_canary(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++) if (float_bits(x[i]) != FZ_CANARY) return 0;
    return 1;
}

// an int from the edges of its range, or raw bits
static int fz_int(fz *in) {
    static const int EDGE[] = {INT_MIN, INT_MIN + 1, -65536, -2, -1, 0, 1, 2, 3, 8, 1000, 46341, 65536, 1 << 20, 1 << 30, INT_MAX};
    uint8_t b = fz_u8(in);
    if (b < 192) return EDGE[b & 15];
    uint32_t u = fz_u32(in);
    int x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// ----------------------------------------------------------------------------
// attn_forward_stats

typedef struct {
    int n, m, d_k, d_v, begin, end, with_weights, no_stats, null_member, point_broken;
    float scale;
    unsigned flags;
    float *q, *k, *v, *qpos, *kpos;
    uint8_t *mask;
    int32_t *points;
} stats_case;

// positions (count): integers from an offset (token positions, as heads.c gives them), the same
// times 1.5, or any floats of the input (fz_matrix: huge, tiny, NaN, ±Inf, raw bits)
static float *positions(fz *in, int count) {
    uint8_t kind = fz_u8(in);
    if ((kind & 3) >= 2) return fz_matrix(in, (size_t)count);
    float *p = malloc((size_t)count * sizeof *p);
    for (int i = 0; i < count; i++) p[i] = (float)(i + (kind >> 2) - 8) * ((kind & 3) ? 1.5f : 1.0f);
    return p;
}

// points (n, ATTN_ROW_POINTS): mode 0 and 3 any key or -1, 1 those heads.c gives a query of rank
// i (0, i − 1, i, i + 1, i − S + 1, i − S, -1 where not a key), 2 none (-1); with bits 2-4 all
// set, one point then broken (< -1 or >= m)
static int32_t *make_points(fz *in, int n, int m, int *broken) {
    const uint8_t mode = fz_u8(in);
    const int S = 1 + fz_u8(in) % n;
    int32_t *pt = malloc((size_t)n * ATTN_ROW_POINTS * sizeof *pt);
    for (int i = 0; i < n; i++) {
        const int want[ATTN_ROW_POINTS] = {0, i - 1, i, i + 1, i - S + 1, i - S};
        for (int p = 0; p < ATTN_ROW_POINTS; p++) {
            int32_t j = (int32_t)(fz_u8(in) % (m + 1)) - 1;
            if ((mode & 3) == 1) j = want[p] >= 0 && want[p] < m ? want[p] : -1;
            if ((mode & 3) == 2) j = -1;
            pt[(size_t)i * ATTN_ROW_POINTS + p] = j;
        }
    }
    *broken = (mode & 0x1c) == 0x1c;
    if (*broken) {
        const int32_t BAD[] = {-2, -3, m, m + 1, INT32_MIN, INT32_MAX, -1000, m + 1000};
        const size_t lo = fz_u8(in), hi = fz_u8(in), at = (lo | hi << 8) % ((size_t)n * ATTN_ROW_POINTS);
        pt[at] = BAD[fz_u8(in) & 7];
    }
    return pt;
}

static void read_stats_case(fz *in, stats_case *c) {
    c->n = 1 + fz_u8(in) % 48; c->m = 1 + fz_u8(in) % 140; c->d_k = 1 + fz_u8(in) % 24; c->d_v = 1 + fz_u8(in) % 24;
    if (c->n * c->m * (c->d_k + c->d_v) > COST_CAP) c->n = 1 + COST_CAP / (c->m * (c->d_k + c->d_v));
    const int n = c->n, m = c->m;
    const uint8_t opt = fz_u8(in);
    c->with_weights = opt & 1;
    c->no_stats = (opt >> 4) & 1;
    c->null_member = (opt >> 5) <= 4 ? opt >> 5 : 0;
    c->scale = fz_scale(in, (opt >> 2) & 3, c->d_k);
    c->flags = fz_flags(in);
    static const int EXTREME[] = {-1, 0, INT_MIN, INT_MAX, 1, -7};
    const uint8_t rb = fz_u8(in);
    switch (rb & 15) {
    case 0: c->begin = -1 - fz_u8(in) % 3; c->end = 1 + fz_u8(in) % n; break;       // begin < 0
    case 1: c->begin = fz_u8(in) % n; c->end = n + 1 + fz_u8(in) % 3; break;       // end > n
    case 2: c->begin = fz_u8(in) % n; c->end = c->begin; break;                   // empty
    case 3: c->end = fz_u8(in) % n; c->begin = c->end + 1 + fz_u8(in) % 2; break;  // reversed
    case 4: c->begin = EXTREME[fz_u8(in) % 6]; c->end = EXTREME[fz_u8(in) % 6]; break;
    default: c->begin = fz_u8(in) % n; c->end = c->begin + 1 + fz_u8(in) % (n - c->begin); break;
    }
    c->qpos = positions(in, n);
    c->kpos = positions(in, m);
    c->points = make_points(in, n, m, &c->point_broken);
    c->q = fz_matrix(in, (size_t)n * c->d_k);
    c->k = fz_matrix(in, (size_t)m * c->d_k);
    c->v = fz_matrix(in, (size_t)m * c->d_v);
    c->mask = (opt >> 1) & 1 ? fz_mask(in, n, m) : NULL;
}

static void dump_stats_case(const stats_case *c) {
    if (!fz_dumping()) return;
    fprintf(stderr, "attn_forward_stats: n %d m %d d_k %d d_v %d scale %.9g flags %#x weights %d range [%d, %d) "
            "stats %s null member %d\n", c->n, c->m, c->d_k, c->d_v, (double)c->scale, c->flags, c->with_weights,
            c->begin, c->end, c->no_stats ? "NULL" : "given", c->null_member);
    fz_dump("qpos", c->qpos, 1, c->n); fz_dump("kpos", c->kpos, 1, c->m);
    fprintf(stderr, "points (%d, %d) =", c->n, ATTN_ROW_POINTS);
    for (int i = 0; i < c->n * ATTN_ROW_POINTS; i++) fprintf(stderr, "%s%d", i % ATTN_ROW_POINTS ? " " : "\n  ", c->points[i]);
    fprintf(stderr, "\n");
    fz_dump("q", c->q, c->n, c->d_k); fz_dump("k", c->k, c->m, c->d_k); fz_dump("v", c->v, c->m, c->d_v);
    fz_dump_mask(c->mask, c->n, c->m);
}

#define BIT(s) (1u << (s))

static double max_abs_pos(const stats_case *c) {
    return fmax(max_abs(c->qpos, (size_t)c->n), max_abs(c->kpos, (size_t)c->m));
}

// The statuses the broken preconditions allow (0: none broken).
static unsigned broken_preconditions(const stats_case *c, const attn_row_stats *rs) {
    unsigned want = 0;
    if (c->begin < 0 || c->end > c->n || c->begin >= c->end) want |= BIT(ATTN_ERR_SIZE);
    if (!isfinite(c->scale) || c->scale < 0.0f) want |= BIT(ATTN_ERR_SCALE);
    if (c->flags & ~ATTN_CAUSAL) want |= BIT(ATTN_ERR_FLAGS);
    if (rs) {
        if (!rs->out || !rs->qpos || !rs->kpos || !rs->points) want |= BIT(ATTN_ERR_NULL);
        if ((rs->qpos && !all_finite(rs->qpos, (size_t)c->n)) || (rs->kpos && !all_finite(rs->kpos, (size_t)c->m)))
            want |= BIT(ATTN_ERR_NON_FINITE);
        if (rs->points && c->point_broken) want |= BIT(ATTN_ERR_RANGE);
        if (rs->qpos && rs->kpos && max_abs_pos(c) > (double)ATTN_MAX_POSITION) want |= BIT(ATTN_ERR_RANGE);
    }
    if (!all_finite(c->q, (size_t)c->n * c->d_k) || !all_finite(c->k, (size_t)c->m * c->d_k) ||
        !all_finite(c->v, (size_t)c->m * c->d_v)) want |= BIT(ATTN_ERR_NON_FINITE);
    // the overflow bound is checked before any work too: with another broken precondition
    // either status may come first
    else if (want && overflow_plausible(c->q, c->k, c->v, c->n, c->m, c->d_k, c->d_v, c->scale)) want |= BIT(ATTN_ERR_OVERFLOW);
    return want;
}

// Positions beyond ±ATTN_MAX_POSITION are refused (ATTN_ERR_RANGE): within it, the kernels' float
// sums of e·|qpos − kpos| (at most 256 terms between folds into double, each at most 2^61) stay
// finite, so every statistic is checked. (Finding F9: before the bound, qpos -2.5e38 gave +inf on
// the row path and NaN in the tiled kernel.)

// The invariants of one written row i of statistics (attention.h's definitions): all 0 when no
// key is allowed; finite; entropy in [0, log2(allowed keys)]; distance in [0, max |qpos_i −
// kpos_j|] over the allowed keys (a convex combination); points' weights in [0, 1], exactly 0 for
// -1 and for a masked key.
static void check_stat_row(const stats_case *c, const float *o, int i) {
    int keys = 0;
    double far = 0;
    for (int j = 0; j < c->m; j++) {
        if (!allowed_at(c->mask, i, j, c->m, c->flags)) continue;
        keys++;
        far = fmax(far, fabs((double)c->qpos[i] - (double)c->kpos[j]));
    }
    for (int s = 0; s < ATTN_ROW_STATS; s++) {
        CHECK(isfinite(o[s]), "row %d: statistic %d = %g (bits %08x) is not finite", i, s, (double)o[s], float_bits(o[s]));
        if (!keys) CHECK(o[s] == 0.0f, "row %d has no key but statistic %d = %g, not 0", i, s, (double)o[s]);
    }
    if (!keys) return;
    const double h = o[ATTN_ROW_ENTROPY], top = log2((double)keys);
    CHECK(h >= -1e-6 && h <= top + 1e-5 + 1e-5 * top, "row %d: entropy %.9g outside [0, log2 %d = %.9g]", i, h, keys, top);
    const double dist = o[ATTN_ROW_DISTANCE];
    CHECK(dist >= 0 && dist <= far * (1 + 1e-5), "row %d: distance %.9g outside [0, %.9g] (the largest |qpos - kpos|)",
          i, dist, far);
    for (int p = 0; p < ATTN_ROW_POINTS; p++) {
        const int32_t j = c->points[(size_t)i * ATTN_ROW_POINTS + p];
        const float w = o[ATTN_ROW_POINT + p];
        CHECK(w >= 0.0f && w <= 1.0f + 1e-6f, "row %d: point %d (key %d) has weight %.9g", i, p, j, (double)w);
        if (j < 0 || !allowed_at(c->mask, i, j, c->m, c->flags))
            CHECK(w == 0.0f, "row %d: point %d (key %d, %s) has weight %.9g, not 0", i, p, j, j < 0 ? "none" : "masked", (double)w);
    }
}

// attn_row_stats_naive against the definitions, summed here in double from the same weights:
// both round one double to float, so they agree to within a few units in the last place.
static void check_naive_stats(const stats_case *c, const float *got, const float *w) {
    for (int i = 0; i < c->n; i++) {
        double h = 0, d = 0;
        for (int j = 0; j < c->m; j++) {
            const double x = w[(size_t)i * c->m + j];
            if (x > 0) h -= x * log2(x);
            d += x * fabs((double)c->qpos[i] - (double)c->kpos[j]);
        }
        double want[ATTN_ROW_STATS] = {[ATTN_ROW_ENTROPY] = h, [ATTN_ROW_DISTANCE] = d};
        for (int p = 0; p < ATTN_ROW_POINTS; p++) {
            const int32_t j = c->points[(size_t)i * ATTN_ROW_POINTS + p];
            want[ATTN_ROW_POINT + p] = j < 0 ? 0.0 : w[(size_t)i * c->m + j];
        }
        for (int s = 0; s < ATTN_ROW_STATS; s++) {
            const double a = got[(size_t)i * ATTN_ROW_STATS + s], e = want[s];
            CHECK(fabs(a - e) <= 1e-6 * fabs(e) + 1e-30, "attn_row_stats_naive: row %d statistic %d = %.9g, want %.9g", i, s, a, e);
        }
    }
}

// E_i of row i (fuzz.h's row_tolerance): how far two summation orders may move its scores
static double score_error(const stats_case *c, int i) {
    return (c->d_k + 4) * 0x1p-23 * (double)c->scale * max_row_norm(c->q + (size_t)i * c->d_k, 1, c->d_k) *
           max_row_norm(c->k, c->m, c->d_k);
}

// The kernel's statistics (rows [begin, end) of got) against attn_row_stats_naive on the weights
// of attn_forward: |a − e| <= 2e-5 + 2e-5·|e| (tests/native/c/test_core.c's test_row_stats).
// With weights both come from the row path's scores and that is all. Without weights they may
// come from the tiled kernel, whose scores are summed in another order: they differ by up to
// E_i = (d_k + 4)·2⁻²³·scale·‖q_i‖·max‖k_j‖ (fuzz.h's row_tolerance). A change δ_j of the
// scores, |δ_j| <= E_i, moves each weight by w_j·(δ_j − Σ w·δ), at most 2·E_i·w_j, so the
// entropy (dH = −Σ dw_j·log2 w_j), the distance and each point's weight move by at most 2·E_i
// of their value to first order: the rows are then compared with 4·E_i·|e| more, and not at
// all when E_i > 1e-3 (as fuzz.h's compare_attention).
static void compare_with_naive(const stats_case *c, const float *got) {
    const int n = c->n, m = c->m;
    float *out = fz_output((size_t)n * c->d_v), *w = fz_output((size_t)n * m), *ref = fz_output((size_t)n * ATTN_ROW_STATS);
    attn_status s = attn_forward(out, w, NULL, c->q, c->k, c->v, c->mask, n, m, c->d_k, c->d_v, c->scale, c->flags);
    // OVERFLOW: a row outside the range overflowed its output (max |v| near FLT_MAX)
    CHECK(s == ATTN_OK || s == ATTN_ERR_OVERFLOW, "attn_forward returned %d (%s) where attn_forward_stats gave OK", s, attn_status_string(s));
    if (s == ATTN_OK) {
        const attn_row_stats rs = {ref, c->qpos, c->kpos, c->points};
        attn_row_stats_naive(&rs, w, n, m);
        check_naive_stats(c, ref, w);
        for (int i = c->begin; i < c->end; i++) {
            const double e_i = c->with_weights ? 0 : score_error(c, i);
            if (!(e_i <= 1e-3)) continue;
            for (int t = 0; t < ATTN_ROW_STATS; t++) {
                const double a = got[(size_t)i * ATTN_ROW_STATS + t], e = ref[(size_t)i * ATTN_ROW_STATS + t];
                const double tol = 2e-5 + (2e-5 + 4 * e_i) * fabs(e);
                CHECK(fabs(a - e) <= tol, "%s: row %d statistic %d = %.9g, attn_row_stats_naive %.9g (tolerance %g)",
                      c->with_weights ? "with weights" : "without weights", i, t, a, e, tol);
            }
        }
    }
    free(out); free(w); free(ref);
}

// On OK: out and weights are attn_forward_rows's bits (statistics change nothing else), the
// statistics are written in the range's rows only, and each passes the invariants.
static void check_stats_ok(const stats_case *c, const float *out, const float *w, const attn_row_stats *rs, float *ws) {
    const int n = c->n, m = c->m;
    float *out1 = fz_output((size_t)n * c->d_v), *w1 = c->with_weights ? fz_output((size_t)n * m) : NULL;
    attn_status s1 = attn_forward_rows(out1, w1, ws, c->q, c->k, c->v, c->mask, n, m, c->d_k, c->d_v, c->scale, c->flags,
                                       c->begin, c->end);
    CHECK(s1 == ATTN_OK, "attn_forward_stats OK but attn_forward_rows [%d, %d) returned %d", c->begin, c->end, s1);
    CHECK(memcmp(out, out1, (size_t)n * c->d_v * sizeof *out) == 0, "out differs from attn_forward_rows's (not the same bits)");
    if (w) CHECK(memcmp(w, w1, (size_t)n * m * sizeof *w) == 0, "weights differ from attn_forward_rows's (not the same bits)");
    free(out1); free(w1);
    if (!rs) return;
    for (int i = 0; i < n; i++) {
        const float *o = rs->out + (size_t)i * ATTN_ROW_STATS;
        if (i < c->begin || i >= c->end) {
            CHECK(all_canary(o, ATTN_ROW_STATS), "row %d is outside [%d, %d) but its statistics were written", i, c->begin, c->end);
        } else {
            check_stat_row(c, o, i);
        }
    }
    compare_with_naive(c, rs->out);
}

static void fuzz_forward_stats(fz *in) {
    stats_case c;
    read_stats_case(in, &c);
    dump_stats_case(&c);
    const int n = c.n, m = c.m;
    float *so = fz_output((size_t)n * ATTN_ROW_STATS);
    attn_row_stats member = {so, c.qpos, c.kpos, c.points};
    if (c.null_member == 1) member.out = NULL;
    if (c.null_member == 2) member.qpos = NULL;
    if (c.null_member == 3) member.kpos = NULL;
    if (c.null_member == 4) member.points = NULL;
    const attn_row_stats *rs = c.no_stats ? NULL : &member;
    float *out = fz_output((size_t)n * c.d_v), *w = c.with_weights ? fz_output((size_t)n * m) : NULL;
    float *ws = malloc(attn_workspace_size(n, m, c.d_k, c.d_v));

    attn_status s = attn_forward_stats(out, w, ws, rs, c.q, c.k, c.v, c.mask, n, m, c.d_k, c.d_v, c.scale, c.flags, c.begin, c.end);
    CHECK(status_valid(s) || s == ATTN_ERR_RANGE, "status %d", s);
    const unsigned want = broken_preconditions(&c, rs);
    if (want) {
        CHECK(s != ATTN_OK && (want & BIT(s)), "attn_forward_stats returned %d (%s); the broken preconditions allow %#x "
              "(range [%d, %d) of n = %d, scale %g, flags %#x, stats %s, member %d NULL, a point broken %d)", s,
              attn_status_string(s), want, c.begin, c.end, n, (double)c.scale, c.flags, rs ? "given" : "NULL", c.null_member,
              c.point_broken);
        // an argument refused: checked before any work, like fuzz_rows' ranges
        if (s != ATTN_ERR_OVERFLOW && s != ATTN_ERR_NON_FINITE)
            CHECK(all_canary(out, (size_t)n * c.d_v) && (!w || all_canary(w, (size_t)n * m)) && all_canary(so, (size_t)n * ATTN_ROW_STATS),
                  "attn_forward_stats failed with %d (%s) but wrote to its outputs", s, attn_status_string(s));
    } else if (must_overflow(c.q, c.k, n, m, c.d_k, c.scale)) {
        CHECK(s == ATTN_ERR_OVERFLOW, "attn_forward_stats returned %d (%s) although the logits bound is >= FLT_MAX/2", s, attn_status_string(s));
    } else {
        CHECK(s == ATTN_OK || (s == ATTN_ERR_OVERFLOW && overflow_plausible(c.q, c.k, c.v, n, m, c.d_k, c.d_v, c.scale)),
              "attn_forward_stats returned %d (%s) for valid finite inputs", s, attn_status_string(s));
        if (s == ATTN_OK) check_stats_ok(&c, out, w, rs, ws);
    }
    free(c.q); free(c.k); free(c.v); free(c.qpos); free(c.kpos); free(c.mask); free(c.points);
    free(so); free(out); free(w); free(ws);
}

// ----------------------------------------------------------------------------
// the heads' sizes

// No size_t wraps: the floats' bytes fit in size_t; 0 only near that limit (within a factor 2 of
// what the header implies, which leaves room for the layout's own counts).
static void check_floats(const char *who, size_t got, long double implied, int invalid) {
    const long double limit = (long double)SIZE_MAX / sizeof(float);
    if (invalid) { CHECK(got == 0, "%s = %zu for a size < 1", who, got); return; }
    if (got == 0) { CHECK(2 * implied > limit, "%s = 0 but %.0Lf floats fit", who, implied); return; }
    CHECK((long double)got >= implied, "%s = %zu, less than the %.0Lf floats the header implies", who, got, implied);
    CHECK(got <= SIZE_MAX / sizeof(float), "%s = %zu floats: their bytes do not fit in size_t", who, got);
}

// keep's scratch holds "the rows' positions and ranks, their points, one layer's row statistics":
// T positions, T ranks, (T, ATTN_ROW_POINTS) points, (H, T, ATTN_ROW_STATS) statistics, and the
// keys' positions (m) an attn_row_stats needs. attn_heads_map's workspace holds what its
// attn_forward needs besides the weights: out (T, d) and a mask (T, m) bytes.
static void fuzz_sizes(fz *in) {
    const int T = fz_int(in), m = fz_int(in), H = fz_int(in), d = fz_int(in);
    if (fz_dumping()) fprintf(stderr, "sizes: T %d m %d H %d d %d\n", T, m, H, d);
    const long double keep = (long double)H * T * ATTN_ROW_STATS + (long double)T * (2 + ATTN_ROW_POINTS) + m;
    check_floats("attn_heads_keep_floats", attn_heads_keep_floats(T, m, H), keep, T < 1 || m < 1 || H < 1);
    const long double map = (long double)T * d + (long double)T * m / 4;
    check_floats("attn_heads_map_floats", attn_heads_map_floats(T, m, d), map, T < 1 || m < 1 || d < 1);
}

// ----------------------------------------------------------------------------
// attn_heads_map

typedef struct {
    int L, H, G, d, T, m, S, l, i, decoder, brk;
    uint8_t bad;   // picks the broken value
    float *queries, *cache, *keys, *v;
    uint8_t *key_mask;
} map_case;

// what to break (opt bits 2-6 >= 16): the NULL ones, then the invalid values
enum { BRK_WEIGHTS, BRK_WORKSPACE, BRK_KEEP, BRK_QUERIES, BRK_KEYS, BRK_L, BRK_I, BRK_G, BRK_T, BRK_M, BRK_S, BRK_D, BRK_H,
       BRK_DECODER_M, BRK_NONE };

// one head's weights again through the header's description: attn_forward on the head's kept
// queries and its kv head's keys (a decoder's from the cache's block (2l, g), causal from
// position 0; an encoder's kept keys, every query under the key mask), with values v
static attn_status reference(float *w, const map_case *c) {
    const int g = c->i / (c->H / c->G), T = c->T, m = c->m, d = c->d;
    const float *q = c->queries + ((size_t)c->l * c->H + (size_t)c->i) * T * d;
    float *out = fz_output((size_t)T * d);
    attn_status s;
    if (c->decoder) {
        const float *k = c->cache + ((size_t)2 * c->l * c->G + (size_t)g) * c->S * d;
        s = attn_forward(out, w, NULL, q, k, c->v, NULL, T, T, d, d, attn_default_scale(d), ATTN_CAUSAL);
    } else {
        const float *k = c->keys + ((size_t)c->l * c->G + (size_t)g) * m * d;
        uint8_t *mask = NULL;
        if (c->key_mask) {
            mask = malloc((size_t)T * m);
            for (int r = 0; r < T; r++) memcpy(mask + (size_t)r * m, c->key_mask, (size_t)m);
        }
        s = attn_forward(out, w, NULL, q, k, c->v, mask, T, m, d, d, attn_default_scale(d), 0);
        free(mask);
    }
    free(out);
    return s;
}

static void read_map_case(fz *in, map_case *c) {
    c->L = 1 + fz_u8(in) % 3; c->H = 1 + fz_u8(in) % 4;
    int divisors[4], nd = 0;
    for (int g = 1; g <= c->H; g++) if (c->H % g == 0) divisors[nd++] = g;
    c->G = divisors[fz_u8(in) % nd];
    c->d = 1 + fz_u8(in) % 16; c->T = 1 + fz_u8(in) % 8;
    const uint8_t opt = fz_u8(in);
    c->decoder = opt & 1;
    c->brk = (opt >> 2) >= 16 ? (opt >> 2) - 16 : BRK_NONE;
    const int extra = fz_u8(in) % 4;
    c->m = c->T + (c->decoder ? 0 : extra);   // an encoder's keys: any m >= T (bert.c: m = T)
    c->S = c->m + fz_u8(in) % 4;               // the cache's capacity
    c->l = fz_u8(in) % c->L; c->i = fz_u8(in) % c->H;
    c->bad = fz_u8(in);
    const int T = c->T, m = c->m, d = c->d;
    c->queries = fz_matrix(in, (size_t)c->L * c->H * T * d);
    c->cache = c->decoder ? fz_matrix(in, (size_t)2 * c->L * c->G * c->S * d) : NULL;
    c->keys = c->decoder ? NULL : fz_matrix(in, (size_t)c->L * c->G * m * d);
    c->key_mask = NULL;
    if (!c->decoder && ((opt >> 1) & 1)) {
        const uint8_t mode = fz_u8(in);
        c->key_mask = malloc((size_t)m);
        for (int j = 0; j < m; j++) c->key_mask[j] = (mode & 3) == 0 ? 0 : (mode & 3) == 1 ? 1 : fz_u8(in) & 1;
    }
    const fz_values plain = {0, 1.0f};   // values of the reference: small, finite (the weights do not depend on them)
    c->v = malloc((size_t)m * d * sizeof *c->v);
    for (size_t x = 0; x < (size_t)m * d; x++) c->v[x] = fz_float(in, plain);
}

// the arguments of one call of attn_heads_map
typedef struct {
    float *weights, *workspace;
    const attn_heads_keep *keep;
    const float *cache;
    int l, i, T, m, S, H, G, d;
} map_args;

// the valid call's arguments with c->brk broken (c->brk becomes BRK_NONE where it does not apply)
static map_args break_args(map_case *c, float *w, float *ws, attn_heads_keep *keep) {
    map_args a = {w, ws, keep, c->cache, c->l, c->i, c->T, c->m, c->S, c->H, c->G, c->d};
    static const int NEG[] = {-1, -2, INT_MIN, -1000};
    static const int BAD_DIM[] = {0, -1, -2, -31, -64, INT_MIN, -1000000, 0};
    const int H = c->H, b = c->bad;
    switch (c->brk) {
    case BRK_WEIGHTS: a.weights = NULL; break;
    case BRK_WORKSPACE: a.workspace = NULL; break;
    case BRK_KEEP: a.keep = NULL; break;
    case BRK_QUERIES: keep->queries = NULL; break;
    case BRK_KEYS: keep->keys = NULL; a.cache = NULL; break;
    case BRK_L: a.l = NEG[b & 3]; break;
    case BRK_I: { const int bad[] = {-1, H, H + 1, INT_MAX, INT_MIN}; a.i = bad[b % 5]; } break;
    case BRK_G: { const int bad[] = {0, -1, INT_MIN, H + 1, H > 2 ? H - 1 : H + 2}; a.G = bad[b % 5]; } break;
    case BRK_T: a.T = BAD_DIM[b & 7]; break;
    case BRK_M: a.m = c->T - 1 - b % 3; break;
    case BRK_S: a.S = c->m - 1 - b % 3; break;
    case BRK_D: a.d = BAD_DIM[b & 7]; break;
    case BRK_H: a.H = NEG[b & 3] + 1; break;   // 0, -1, INT_MIN + 1, -999: every i is at or above it
    case BRK_DECODER_M:   // the header: a decoder's map is from position 0, T = m
        if (c->decoder) { a.m = c->T + 1 + b % 3; a.S = a.m; } else c->brk = BRK_NONE;
        break;
    default: c->brk = BRK_NONE; break;
    }
    return a;
}

static void dump_map_case(const map_case *c, const map_args *a) {
    if (!fz_dumping()) return;
    fprintf(stderr, "attn_heads_map: %s, break %d: l %d i %d T %d m %d S %d H %d G %d d %d (valid: L %d l %d i %d T %d m %d S %d "
            "H %d G %d d %d)%s%s%s%s%s\n", c->decoder ? "decoder" : "encoder", c->brk, a->l, a->i, a->T, a->m, a->S, a->H, a->G, a->d,
            c->L, c->l, c->i, c->T, c->m, c->S, c->H, c->G, c->d, a->weights ? "" : ", weights NULL",
            a->workspace ? "" : ", workspace NULL", a->keep ? "" : ", keep NULL", a->keep && !a->keep->queries ? ", queries NULL" : "",
            a->keep && !a->keep->keys && !a->cache ? ", keys and cache NULL" : "");
    fz_dump("queries", c->queries, c->L * c->H * c->T, c->d);
    if (c->cache) fz_dump("cache", c->cache, 2 * c->L * c->G * c->S, c->d);
    if (c->keys) fz_dump("keys", c->keys, c->L * c->G * c->m, c->d);
    fz_dump_mask(c->key_mask, 1, c->m);
}

// a valid call: attn_forward's status (but for the float limit) and its weights' bits
static void check_map_ok(const map_case *c, attn_status s, const float *w) {
    const int T = c->T, m = c->m;
    float *want = fz_output((size_t)T * m);
    attn_status sr = reference(want, c);
    // attn_heads_map's own forward runs with v = k (the values are not kept): at the float limit
    // its output may overflow where the reference's (small values) does not (fuzz.h's F5)
    const float *k = c->decoder ? c->cache : c->keys;
    const size_t kcount = c->decoder ? (size_t)2 * c->L * c->G * c->S * c->d : (size_t)c->L * c->G * m * c->d;
    CHECK(s == sr || (s == ATTN_ERR_OVERFLOW && sr == ATTN_OK && at_float_limit(k, kcount)),
          "attn_heads_map returned %d (%s), attn_forward on the same q and k %d (%s)", s, attn_status_string(s), sr, attn_status_string(sr));
    if (s == ATTN_OK && sr == ATTN_OK)
        CHECK(memcmp(w, want, (size_t)T * m * sizeof *w) == 0, "attn_heads_map's weights (%s, T %d m %d) are not attn_forward's bits",
              c->decoder ? "decoder" : "encoder", T, m);
    free(want);
}

static void fuzz_map(fz *in) {
    map_case c;
    read_map_case(in, &c);
    const size_t ws_floats = attn_heads_map_floats(c.T, c.m, c.d);
    CHECK(ws_floats > 0, "attn_heads_map_floats(%d, %d, %d) = 0", c.T, c.m, c.d);
    float *w = fz_output((size_t)c.T * c.m), *ws = fz_output(ws_floats);   // exactly the floats asked for
    attn_heads_keep keep = {.queries = c.queries, .keys = c.keys};
    const map_args a = break_args(&c, w, ws, &keep);
    dump_map_case(&c, &a);
    attn_status s = attn_heads_map(a.weights, a.workspace, a.keep, a.cache, c.key_mask, a.l, a.i, a.T, a.m, a.S, a.H, a.G, a.d);
    CHECK(status_valid(s) || s == ATTN_ERR_RANGE, "status %d", s);
    if (c.brk != BRK_NONE) {
        const attn_status want = c.brk <= BRK_KEYS ? ATTN_ERR_NULL : c.brk == BRK_D ? ATTN_ERR_SIZE : ATTN_ERR_RANGE;
        CHECK(s == want, "attn_heads_map, break %d (l %d i %d T %d m %d S %d H %d G %d d %d), returned %d (%s), want %d (%s)", c.brk,
              a.l, a.i, a.T, a.m, a.S, a.H, a.G, a.d, s, attn_status_string(s), want, attn_status_string(want));
        CHECK(all_canary(w, (size_t)c.T * c.m) && all_canary(ws, ws_floats),
              "attn_heads_map failed with %d (break %d) but wrote to its weights or workspace", s, c.brk);
    } else {
        check_map_ok(&c, s, w);
    }
    free(c.queries); free(c.cache); free(c.keys); free(c.key_mask); free(c.v); free(w); free(ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz in = fz_init(data, size);
    const uint8_t part = fz_u8(&in) % 8;
    if (part <= 4) fuzz_forward_stats(&in);
    else if (part == 5) fuzz_sizes(&in);
    else fuzz_map(&in);
    return 0;
}
