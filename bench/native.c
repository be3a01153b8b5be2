// native.c - the C core compiled natively, the benchmark's reference point.
//
//   gcc -O3 -march=native -ffp-contract=off bench/native.c -o native -lm
//   ./native DIR n d rounds [n d rounds ...]     batch: time each size, print its medians
//   ./native DIR                                  interactive: commands on stdin (bench.js)
//
// Inputs: DIR/in-N.bin holds q (n, d), k (n, d), v (n, d) as float32 (little-endian), written
// by bench.js. attn_forward runs with weights = NULL and a workspace (m = n, d_k = d_v = d);
// the output goes to DIR/out-N.bin for bench.js to check. A sample times `reps` calls in a
// row, enough to take about 2 ms, so that small n are not lost in the clock's resolution.
//
// Interactive commands, one per line, each answered by one line of JSON on stdout:
//   load N D MS   read DIR/in-N.bin, run once, write DIR/out-N.bin, pick reps for MS ms -> { n, reps }
//   sample N      one sample                                                          -> { ms }
//   done N        the medians of this size's samples, and free it  -> { n, d, rounds, reps, median_ms, min_ms }
// bench.js interleaves `sample` with its JS samples, so native C sees the same noisy machine.
#define _POSIX_C_SOURCE 199309L
#include "../c_src/attention.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// Bytes of workspace for n = m, d_k = d_v = d. bench.js reads the declaration of
// attn_workspace_size in attention.h and passes the matching call with -D, so that this file
// follows the header when its parameters change; this default is the current form.
#ifndef WORKSPACE_SIZE
#define WORKSPACE_SIZE(n, d) attn_workspace_size(n, n, d, d)
#endif

#define MAX_SAMPLES 1024

typedef struct {
    int n, d, reps, count;
    float *q, *k, *v, *out, *ws, scale;
    double ms[MAX_SAMPLES];
} size_state;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *read_floats(FILE *f, size_t count) {
    float *p = malloc(count * sizeof *p);
    if (!p || fread(p, sizeof *p, count, f) != count) { free(p); return NULL; }
    return p;
}

static attn_status forward(size_state *s) {
    return attn_forward(s->out, NULL, s->ws, s->q, s->k, s->v, NULL, s->n, s->n, s->d, s->d, s->scale, 0);
}

// read the inputs, run once, write the output, choose reps; 0 on success
static int load(size_state *s, const char *dir, int n, int d, double target_ms) {
    size_t count = (size_t)n * d;
    char path[4096];
    snprintf(path, sizeof path, "%s/in-%d.bin", dir, n);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "native: cannot open %s\n", path); return 1; }
    s->n = n; s->d = d; s->count = 0; s->scale = attn_default_scale(d);
    s->q = read_floats(f, count); s->k = read_floats(f, count); s->v = read_floats(f, count);
    fclose(f);
    size_t ws_bytes = WORKSPACE_SIZE(n, d);
    s->out = malloc(count * sizeof *s->out);
    s->ws = malloc(ws_bytes ? ws_bytes : 16);   // never malloc(0): NULL would mean no memory
    if (!s->q || !s->k || !s->v || !s->out || !s->ws) { fprintf(stderr, "native: %s: short file or no memory\n", path); return 1; }
    attn_status st = forward(s);
    if (st != ATTN_OK) { fprintf(stderr, "native: n = %d: %s\n", n, attn_status_string(st)); return 1; }
    snprintf(path, sizeof path, "%s/out-%d.bin", dir, n);
    f = fopen(path, "wb");
    if (!f || fwrite(s->out, sizeof *s->out, count, f) != count) { fprintf(stderr, "native: cannot write %s\n", path); return 1; }
    fclose(f);
    double t0 = now_ms();
    forward(s);
    double once = now_ms() - t0;
    s->reps = once >= target_ms ? 1 : (int)(target_ms / (once > 1e-4 ? once : 1e-4)) + 1;
    for (int i = 0; i < s->reps && once < target_ms; i++) forward(s);   // warm-up
    return 0;
}

static double sample(size_state *s) {
    double t0 = now_ms();
    for (int i = 0; i < s->reps; i++) forward(s);
    double ms = (now_ms() - t0) / s->reps;
    if (s->count < MAX_SAMPLES) s->ms[s->count++] = ms;
    return ms;
}

static void done(size_state *s) {
    qsort(s->ms, (size_t)s->count, sizeof s->ms[0], cmp_double);
    int c = s->count;
    double median = c == 0 ? 0.0 : c % 2 ? s->ms[c / 2] : 0.5 * (s->ms[c / 2 - 1] + s->ms[c / 2]);
    printf("{\"n\": %d, \"d\": %d, \"rounds\": %d, \"reps\": %d, \"median_ms\": %.6f, \"min_ms\": %.6f}\n",
           s->n, s->d, c, s->reps, median, c ? s->ms[0] : 0.0);
    fflush(stdout);
    free(s->q); free(s->k); free(s->v); free(s->out); free(s->ws);
    s->q = s->k = s->v = s->out = s->ws = NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || (argc > 2 && (argc - 2) % 3 != 0)) {
        fprintf(stderr, "usage: %s DIR [n d rounds ...]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    static size_state s;
    if (argc > 2) {  // batch
        for (int a = 2; a + 2 < argc; a += 3) {
            int rounds = atoi(argv[a + 2]);
            if (load(&s, dir, atoi(argv[a]), atoi(argv[a + 1]), 2.0)) return 1;
            for (int r = 0; r < rounds; r++) sample(&s);
            done(&s);
        }
        return 0;
    }
    char line[256];
    while (fgets(line, sizeof line, stdin)) {  // interactive
        int n, d;
        double target;
        if (sscanf(line, "load %d %d %lf", &n, &d, &target) == 3) {
            if (load(&s, dir, n, d, target)) return 1;
            printf("{\"n\": %d, \"reps\": %d}\n", n, s.reps);
        } else if (sscanf(line, "sample %d", &n) == 1 && n == s.n) {
            printf("{\"ms\": %.6f}\n", sample(&s));
        } else if (sscanf(line, "done %d", &n) == 1 && n == s.n) {
            done(&s);
            continue;
        } else {
            fprintf(stderr, "native: bad command: %s", line);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
