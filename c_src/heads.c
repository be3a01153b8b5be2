// heads.c - the models' per-head attention job (heads.h): the plan, the slots, the chunked run.
#include "heads.h"
#include "internal.h"  // gather, scatter
#include "parallel.h"  // attn_head_chunks, attn_run_chunks, attn_part_range, attn_first_failure

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

typedef struct {
    float *y, *attention;
    const int32_t *slots;
    const attn_heads_plan *pl;
    const attn_heads_scratch *scratch;
    const attn_heads_input *in;
    int l;
    int status[ATTN_MAX_CHUNKS];
} heads_job;

// query head i's q (T, d) gathered into qh; its kv head's keys and values: the cache's rows, or
// k's and v's columns gathered into kh and vh
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

// the heads of one chunk, on thread `thread`'s scratch; each head writes its weights and its
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
    int h0, h1;
    attn_part_range(&h0, &h1, pl->H, chunk, chunks);
    j->status[chunk] = ATTN_OK;
    for (int i = h0; i < h1; i++) {
        const float *k, *v;
        head_inputs(&k, &v, qh, kh, vh, j, i);
        float *w = weights_of(j->attention, j->slots, pl, j->l, i);
        attn_status st = attn_forward(oh, w, aws, qh, k, v, pl->mask, T, pl->m, d, d, scale, pl->flags);
        if (st != ATTN_OK) { j->status[chunk] = st; return; }
        // (the place for a head's scores, once it has its weights and output: issue 37's hooks)
        scatter(j->y, oh, T, pl->H * d, i * d, d);
    }
}

attn_status attn_heads_run(float *y, float *attention, const int32_t *slots, int l, const attn_heads_plan *pl,
                           const attn_heads_scratch *scratch, const attn_heads_input *in) {
    const int T = pl->T, d = pl->d;
    for (int g = 0; in->cache && g < pl->G; g++) {   // this call's keys and values into the cache
        gather(cache_at(in->cache, pl, l, 0, g) + (size_t)pl->pos * d, in->k, T, in->kv_width, g * d, d);
        gather(cache_at(in->cache, pl, l, 1, g) + (size_t)pl->pos * d, in->v, T, in->kv_width, g * d, d);
    }
    heads_job job = {.y = y, .attention = attention, .slots = slots, .pl = pl, .scratch = scratch, .in = in, .l = l};
    const int chunks = attn_head_chunks(pl->H);
    attn_run_chunks(heads_chunk, &job, chunks);
    return (attn_status)attn_first_failure(job.status, chunks);
}
