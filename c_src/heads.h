// heads.h - the models' attention, a query head at a time, as one job for the threads (parallel.h):
// gpt2.c, llama.c and bert.c each say only where their heads' queries, keys and values are (and
// whether a KV cache holds the keys); the plan (sizes, positions, how queries see keys), where a
// head writes its weights (the slots), the cache's layout, the run over the heads in chunks with
// each thread's scratch, and the heads' outputs side by side are here, once. Not part of the API.
//
// Legend (the families'): T = tokens of this call, pos = the first one's position, m = pos + T
// keys, S = the KV cache's capacity, H = query heads, G = key/value heads (H a multiple of G: head
// i reads kv head i / (H / G)), d = a head's width.
#ifndef ATTN_HEADS_H
#define ATTN_HEADS_H

#include "attention.h"

// What the attention of every layer shares: sizes, this call's positions, the cache's capacity,
// how queries see keys (flags and mask, attn_forward's).
typedef struct {
    int T, pos, m, S, H, G, d;
    unsigned flags;
    const uint8_t *mask;   // (T, m) or NULL
} attn_heads_plan;

// The decoders' plan: query pos + i sees keys 0 .. pos + i. attention.c's ATTN_CAUSAL (query i sees
// keys j <= i) says that for pos = 0; one query (T = 1) sees every key; otherwise a mask (T, m),
// written into mask.
attn_heads_plan attn_heads_causal(uint8_t *mask, int T, int pos, int S, int H, int G, int d);

// Each thread's scratch: thread t's q, k, v and output at qh + t·T·d, … (each (T, d); kh and vh
// only without a cache, else NULL), its attn_forward workspace at aws + t·aws_floats.
typedef struct {
    float *qh, *kh, *vh, *oh, *aws;
    size_t aws_floats;
} attn_heads_scratch;

// Where a layer's heads find their query, keys and values: q (T, q_width) with query head i's
// columns at [i·d, (i+1)·d); k and v (T, kv_width) with kv head g's at [g·d, (g+1)·d) (gpt2.c's
// qkv: q, k and v at columns 0, C and 2C of one (T, 3C) array, both widths 3C). cache NULL: the keys
// are k's T rows (m = T: bert.c). Else the decoders' KV cache (L, 2, G, S, d), layer l's kv head
// g's keys at block (2l, g) and values at (2l + 1, g), (S, d) each: this call's keys and values go
// into its rows pos .. pos + T - 1, and the heads read its rows 0 .. m - 1.
typedef struct {
    const float *q, *k, *v;
    int q_width, kv_width;
    float *cache;
} attn_heads_input;

// Ready keep for a forward of plan pl (before its first layer): the real tokens are every key, or
// those key_mask (m bytes) keeps. ATTN_ERR_NULL (scores without scratch), ATTN_ERR_RANGE (repeat
// outside [0, n − 1]); keep NULL: nothing to do.
attn_status attn_heads_begin(const attn_heads_keep *keep, const attn_heads_plan *pl, const uint8_t *key_mask);

// y (T, H·d) = every query head's attention of layer l, head i's output in columns [i·d, (i+1)·d),
// with the scale 1/√d; head i writes its weights (T, m) into attention: block l·H + i without
// slots, else block slots[l·H + i], nowhere for a slot of -1 or no attention at all. On threads
// the heads are cut into chunks (parallel.h), a head each and, where the threads outnumber the
// heads, blocks of its query rows too (balanced by the cells a causal head computes): the bits of
// one thread on any number. The first failing
// head's status (attn_forward's), or ATTN_OK. keep (NULL: nothing), after attn_heads_begin: the
// layer's scores, queries and keys.
attn_status attn_heads_run(float *y, float *attention, const int32_t *slots, const attn_heads_keep *keep, int l,
                           const attn_heads_plan *pl, const attn_heads_scratch *scratch, const attn_heads_input *in);

#endif // ATTN_HEADS_H
