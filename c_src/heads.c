// heads.c - the models' per-head attention job (heads.h): the plan, the slots, the chunked run.
#include "heads.h"
#include "internal.h"  // gather, scatter
#include "parallel.h"  // attn_threads, attn_run_chunks, attn_first_failure

#include <string.h>

attn_heads_plan attn_heads_causal(uint8_t *mask, int T, int pos, int S, int H, int G, int d) {
    attn_heads_plan pl = {T, pos, pos + T, S, H, G, d, 0, NULL};
    if (pos == 0 && T > 1) pl.flags = ATTN_CAUSAL;
    if (pos > 0 && T > 1) {
        for (int i = 0; i < T; i++)
            for (int j = 0; j < pl.m; j++) mask[(size_t)i * pl.m + j] = j <= pos + i;
        pl.mask = mask;
    }
    return pl;
}

// where head i of layer l writes its weights (T, m) (heads.h's rule)
static float *weights_of(float *attention, const int32_t *slots, const attn_heads_plan *pl, int l, int i) {
    const size_t block = (size_t)pl->T * pl->m, at = (size_t)l * pl->H + (size_t)i;
    if (!attention) return NULL;
    if (!slots) return attention + at * block;
    return slots[at] < 0 ? NULL : attention + (size_t)slots[at] * block;
}

// the cache of layer l, kv head g: keys (kv 0) or values (kv 1), (S, d)
static float *cache_at(float *cache, const attn_heads_plan *pl, int l, int kv, int g) {
    return cache + ((size_t)(2 * l + kv) * pl->G + (size_t)g) * pl->S * pl->d;
}

// ----------------------------------------------------------------------------
// what a forward keeps (heads.h's attn_heads_keep): the scratch's parts, in order:
// n (the real tokens, 1 int), qpos (T), kpos (m), qrank (T ints: a query's rank among the real
// tokens, -1 for none), points (T, ATTN_ROW_POINTS ints), col (m ints: the key of each rank),
// rows (H, T, ATTN_ROW_STATS): one layer's row statistics
typedef struct {
    int32_t *n, *qrank, *points, *col;
    float *qpos, *kpos, *rows;
} keep_parts;

static keep_parts parts_of(const attn_heads_keep *keep, int T, int m) {
    float *p = keep->scratch;
    keep_parts k = {.n = (int32_t *)p, .qpos = p + 1, .kpos = p + 1 + T};
    k.qrank = (int32_t *)(k.kpos + m);
    k.points = k.qrank + T;
    k.col = k.points + (size_t)T * ATTN_ROW_POINTS;
    k.rows = (float *)(k.col + m);
    return k;
}

size_t attn_heads_keep_floats(int T, int m, int H) {
    if (T < 1 || m < 1 || H < 1) return 0;
    const size_t small = 1 + 2 * (size_t)T + 2 * (size_t)m + (size_t)T * ATTN_ROW_POINTS;
    if (!fits((size_t)H * (size_t)T, ATTN_ROW_STATS)) return 0;
    const size_t rows = (size_t)H * (size_t)T * ATTN_ROW_STATS;
    return rows > ((size_t)-1 / sizeof(float)) - small ? 0 : small + rows;
}

// row i's points (attention.h): the keys of ranks 0, r − 1, r, r + 1, r − S + 1 and r − S for a
// query of rank r (-1 where there is no such rank, or no repeat)
static void row_points(int32_t *pt, const keep_parts *k, int r, int n, int S) {
    const int want[ATTN_ROW_POINTS] = {0, r - 1, r, r + 1, S ? r - S + 1 : -1, S ? r - S : -1};
    for (int p = 0; p < ATTN_ROW_POINTS; p++) pt[p] = r >= 0 && want[p] >= 0 && want[p] < n ? k->col[want[p]] : -1;
}

attn_status attn_heads_begin(const attn_heads_keep *keep, const attn_heads_plan *pl, const uint8_t *key_mask) {
    if (!keep || !keep->scores) return ATTN_OK;
    if (!keep->scratch) return ATTN_ERR_NULL;
    const keep_parts k = parts_of(keep, pl->T, pl->m);
    int n = 0;
    for (int j = 0; j < pl->m; j++) {   // the real keys, ranked in order
        const int real = !key_mask || key_mask[j];
        k.kpos[j] = real ? (float)n : 0.0f;
        if (real) k.col[n++] = j;
    }
    if (keep->repeat < 0 || keep->repeat > n - 1) return ATTN_ERR_RANGE;
    *k.n = n;
    for (int i = 0; i < pl->T; i++) {   // query i is key pos + i
        const int j = pl->pos + i, real = !key_mask || key_mask[j];
        k.qrank[i] = real ? (int32_t)k.kpos[j] : -1;
        k.qpos[i] = real ? k.kpos[j] : 0.0f;
        row_points(k.points + (size_t)i * ATTN_ROW_POINTS, &k, k.qrank[i], n, keep->repeat);
    }
    return ATTN_OK;
}

// scores (ATTN_SCORES) of one head from its rows' statistics (T, ATTN_ROW_STATS), the means of
// heads.h over the rows each counts, summed in row order in double
static void head_scores(float *scores, const float *rows, const keep_parts *k, int T, int S) {
    static const int stat_of[ATTN_SCORES] = {ATTN_ROW_POINT + 0, ATTN_ROW_POINT + 1, ATTN_ROW_POINT + 2, ATTN_ROW_POINT + 3,
                                            ATTN_ROW_ENTROPY, ATTN_ROW_DISTANCE, ATTN_ROW_POINT + 4, ATTN_ROW_POINT + 5};
    double sum[ATTN_SCORES] = {0};
    int count[ATTN_SCORES] = {0};
    for (int i = 0; i < T; i++) {
        const int r = k->qrank[i];
        const float *row = rows + (size_t)i * ATTN_ROW_STATS;
        for (int c = 0; c < ATTN_SCORES; c++) {
            const int counts = c == ATTN_SCORE_NEXT ? r >= 1 && r <= *k->n - 2
                             : c >= ATTN_SCORE_INDUCTION ? S > 0 && r >= S : r >= 1;
            if (!counts) continue;
            sum[c] += row[stat_of[c]];
            count[c]++;
        }
    }
    for (int c = 0; c < ATTN_SCORES; c++) scores[c] = count[c] ? (float)(sum[c] / count[c]) : 0.0f;
}

// ----------------------------------------------------------------------------
// the run

typedef struct {
    float *y, *attention;
    const int32_t *slots;
    int blocks;                    // blocks of query rows a head is cut into (row_blocks)
    int rows[ATTN_MAX_CHUNKS + 1]; // block b's rows are [rows[b], rows[b + 1])
    const attn_heads_plan *pl;
    const attn_heads_scratch *scratch;
    const attn_heads_input *in;
    const attn_heads_keep *keep;   // or NULL
    keep_parts parts;              // keep's scratch, with scores
    int l;
    int status[ATTN_MAX_CHUNKS];
} heads_job;

// The heads' chunks on threads: a head each, and with more threads than the heads fill, blocks of
// a head's query rows too (attention.c gives a row the same bits whichever rows share its call),
// cut where the cells (query, key) a causal head computes are shared evenly, at multiples of 8
// rows (the tiled kernel's blocks). One thread: one chunk, every head in turn.
static void row_blocks(heads_job *j) {
    const attn_heads_plan *pl = j->pl;
    const int T = pl->T, threads = attn_threads();
    int blocks = threads == 1 ? 1 : (8 * threads + pl->H - 1) / pl->H;
    if (blocks > (T + 7) / 8) blocks = (T + 7) / 8;
    if (blocks > ATTN_MAX_CHUNKS / pl->H) blocks = ATTN_MAX_CHUNKS / pl->H;
    if (blocks < 1) blocks = 1;
    // the cells of rows [0, r): every key for each, or (causal) keys 0 .. pos + row
    const int causal = (pl->flags & ATTN_CAUSAL) || (pl->mask && pl->pos > 0);   // (an encoder's mask: its key mask)
    const double total = causal ? (double)T * pl->pos + (double)T * (T + 1) / 2 : (double)T * pl->m;
    j->blocks = blocks;
    j->rows[0] = 0;
    for (int b = 1, r = 0; b <= blocks; b++) {
        const double want = total * b / blocks;
        while (r < T && (causal ? (double)r * pl->pos + (double)r * (r + 1) / 2 : (double)r * pl->m) < want) r++;
        r = b == blocks ? T : (r + 7) / 8 * 8 < T ? (r + 7) / 8 * 8 : T;
        j->rows[b] = r > j->rows[b - 1] ? r : j->rows[b - 1];
    }
}

// query head i's q (T, d) gathered into qh (every row: attention.c checks them all, whichever
// rows it computes); its kv head's keys and values: the cache's rows, or k's and v's columns
// gathered into kh and vh
static void head_inputs(const float **k, const float **v, float *qh, float *kh, float *vh, const heads_job *j, int i) {
    const attn_heads_plan *pl = j->pl;
    const attn_heads_input *in = j->in;
    const int T = pl->T, d = pl->d, g = i / (pl->H / pl->G);
    gather(qh, in->q, T, in->q_width, i * d, d);
    if (in->cache) {
        *k = cache_at(in->cache, pl, j->l, 0, g);
        *v = cache_at(in->cache, pl, j->l, 1, g);
        return;
    }
    gather(kh, in->k, T, in->kv_width, g * d, d);
    gather(vh, in->v, T, in->kv_width, g * d, d);
    *k = kh;
    *v = vh;
}

// one chunk: head i = chunk / blocks, its rows of block chunk % blocks (row_blocks), on thread
// `thread`'s scratch; it writes those rows of the head's weights, statistics, kept queries and
// columns of y alone
static void heads_chunk(void *job, int chunk, int chunks, int thread) {
    heads_job *j = job;
    const attn_heads_plan *pl = j->pl;
    const attn_heads_scratch *sc = j->scratch;
    const int T = pl->T, d = pl->d;
    const float scale = attn_default_scale(d);
    const size_t own = (size_t)thread * T * d;
    float *qh = sc->qh + own, *oh = sc->oh + own, *aws = sc->aws + (size_t)thread * sc->aws_floats;
    float *kh = sc->kh ? sc->kh + own : NULL, *vh = sc->vh ? sc->vh + own : NULL;
    int h0 = chunk / j->blocks, h1 = h0 + 1, r0 = j->rows[chunk % j->blocks], r1 = j->rows[chunk % j->blocks + 1];
    if (chunks == 1) { h0 = 0; h1 = pl->H; r0 = 0; r1 = T; }   // one thread: every head, every row
    j->status[chunk] = ATTN_OK;
    if (r0 >= r1) return;
    for (int i = h0; i < h1; i++) {
        const float *k, *v;
        head_inputs(&k, &v, qh, kh, vh, j, i);
        float *w = weights_of(j->attention, j->slots, pl, j->l, i);
        const attn_heads_keep *keep = j->keep;
        if (keep && keep->queries)
            memcpy(keep->queries + (((size_t)j->l * pl->H + (size_t)i) * T + (size_t)r0) * d, qh + (size_t)r0 * d,
                   (size_t)(r1 - r0) * d * sizeof *qh);
        const attn_row_stats rs = {.out = j->parts.rows + (size_t)i * T * ATTN_ROW_STATS, .qpos = j->parts.qpos,
                                   .kpos = j->parts.kpos, .points = j->parts.points};
        const attn_row_stats *stats = keep && keep->scores ? &rs : NULL;
        attn_status st = attn_forward_stats(oh, w, aws, stats, qh, k, v, pl->mask, T, pl->m, d, d, scale, pl->flags, r0, r1);
        if (st != ATTN_OK) { j->status[chunk] = st; return; }
        scatter(j->y + (size_t)r0 * pl->H * d, oh + (size_t)r0 * d, r1 - r0, pl->H * d, i * d, d);
    }
}

attn_status attn_heads_run(float *y, float *attention, const int32_t *slots, const attn_heads_keep *keep, int l,
                           const attn_heads_plan *pl, const attn_heads_scratch *scratch, const attn_heads_input *in) {
    const int T = pl->T, d = pl->d;
    for (int g = 0; in->cache && g < pl->G; g++) {   // this call's keys and values into the cache
        gather(cache_at(in->cache, pl, l, 0, g) + (size_t)pl->pos * d, in->k, T, in->kv_width, g * d, d);
        gather(cache_at(in->cache, pl, l, 1, g) + (size_t)pl->pos * d, in->v, T, in->kv_width, g * d, d);
    }
    for (int g = 0; keep && keep->keys && !in->cache && g < pl->G; g++)   // an encoder's keys, for attn_heads_map
        gather(keep->keys + ((size_t)l * pl->G + (size_t)g) * pl->m * d, in->k, T, in->kv_width, g * d, d);
    heads_job job = {.y = y, .attention = attention, .slots = slots, .pl = pl, .scratch = scratch, .in = in, .l = l,
                     .keep = keep};
    if (keep && keep->scores) job.parts = parts_of(keep, T, pl->m);
    row_blocks(&job);
    const int chunks = attn_threads() == 1 ? 1 : pl->H * job.blocks;
    attn_run_chunks(heads_chunk, &job, chunks);
    attn_status st = (attn_status)attn_first_failure(job.status, chunks);
    for (int i = 0; st == ATTN_OK && keep && keep->scores && i < pl->H; i++)
        head_scores(keep->scores + ((size_t)l * pl->H + (size_t)i) * ATTN_SCORES,
                    job.parts.rows + (size_t)i * T * ATTN_ROW_STATS, &job.parts, T, keep->repeat);
    return st;
}

// ----------------------------------------------------------------------------
// one head's map again

size_t attn_heads_map_floats(int T, int m, int d) {
    if (T < 1 || m < 1 || d < 1 || !fits((size_t)T, (size_t)d) || !fits((size_t)T, (size_t)m)) return 0;
    const size_t out = (size_t)T * d, mask = ((size_t)T * m + 3) / 4;
    return mask > ((size_t)-1 / sizeof(float)) - out ? 0 : out + mask;   // its bytes fit in size_t
}

attn_status attn_heads_map(float *weights, float *workspace, const attn_heads_keep *keep, const float *cache,
                           const uint8_t *key_mask, int l, int i, int T, int m, int S, int H, int G, int d) {
    if (!weights || !workspace || !keep || !keep->queries || (!cache && !keep->keys)) return ATTN_ERR_NULL;
    if (l < 0 || i < 0 || i >= H || G < 1 || H % G != 0 || T < 1 || m < T || S < m || (cache && m != T)) return ATTN_ERR_RANGE;
    if (d < 1) return ATTN_ERR_SIZE;   // before workspace + T·d
    float *out = workspace;
    uint8_t *mask = (uint8_t *)(workspace + (size_t)T * d);
    const float *q = keep->queries + ((size_t)l * H + (size_t)i) * T * d;
    const int g = i / (H / G);
    if (cache) {   // a decoder from position 0: its plan's mask and flags (attn_heads_causal)
        const attn_heads_plan pl = attn_heads_causal(mask, T, 0, S, H, G, d);
        const float *k = cache_at((float *)cache, &pl, l, 0, g);
        return attn_forward(out, weights, NULL, q, k, k, pl.mask, T, pl.m, d, d, attn_default_scale(d), pl.flags);
    }
    for (int r = 0; r < T; r++)   // an encoder: every query sees the keys the mask keeps (bert.c)
        for (int j = 0; j < m; j++) mask[(size_t)r * m + j] = !key_mask || key_mask[j];
    const float *k = keep->keys + ((size_t)l * G + (size_t)g) * m * d;
    return attn_forward(out, weights, NULL, q, k, k, mask, T, m, d, d, attn_default_scale(d), 0);
}
