// native-mha.c - attn_mha_forward compiled natively, for bench.js's multi-head layer.
//
//   gcc -O3 -march=native -ffp-contract=off bench/native-mha.c c_src/attention.c c_src/mha.c -lm
//   ./native-mha DIR        interactive, as native.c: one JSON line answers each command
//
//   load N E H MS   read DIR/mha-in.bin (x (N, E), wq, wk, wv, wo (E, E), bq, bk, bv, bo (E),
//                   float32), run once, write DIR/mha-out.bin, pick reps for MS ms -> { n, reps }
//   sample          one sample                                                 -> { ms }
//   done            the samples' median and minimum                            -> { median_ms, min_ms, rounds }
//
// Self-attention (kv NULL), concat and weights NULL, biases given, the default scale
// 1/sqrt(d_head); the workspace is attn_mha_workspace_size's, allocated once.
#define _POSIX_C_SOURCE 199309L
#include "../c_src/attention.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_SAMPLES 1024

static int n, E, H, reps, count;
static float *buf, *x, *w[4], *b[4], *out, *ws, scale;
static double ms[MAX_SAMPLES];

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b2) {
    double p = *(const double *)a, q = *(const double *)b2;
    return (p > q) - (p < q);
}

static attn_status forward(void) {
    return attn_mha_forward(out, NULL, NULL, ws, x, NULL, w[0], w[1], w[2], w[3], b[0], b[1], b[2], b[3],
                            NULL, n, n, E, H, H, scale, 0);
}

static int load(const char *dir, double target_ms) {
    size_t total = (size_t)n * E + 4 * (size_t)E * E + 4 * (size_t)E;
    char path[4096];
    snprintf(path, sizeof path, "%s/mha-in.bin", dir);
    FILE *f = fopen(path, "rb");
    buf = malloc(total * sizeof *buf);
    if (!f || !buf || fread(buf, sizeof *buf, total, f) != total) { fprintf(stderr, "native-mha: cannot read %s\n", path); return 1; }
    fclose(f);
    x = buf;
    for (int i = 0; i < 4; i++) w[i] = buf + (size_t)n * E + (size_t)i * E * E;
    for (int i = 0; i < 4; i++) b[i] = buf + (size_t)n * E + 4 * (size_t)E * E + (size_t)i * E;
    scale = attn_default_scale(E / H);
    size_t ws_bytes = attn_mha_workspace_size(n, n, E, H, H);
    out = malloc((size_t)n * E * sizeof *out);
    ws = malloc(ws_bytes ? ws_bytes : 16);
    if (!out || !ws || ws_bytes == 0) { fprintf(stderr, "native-mha: no memory or bad sizes\n"); return 1; }
    attn_status st = forward();
    if (st != ATTN_OK) { fprintf(stderr, "native-mha: %s\n", attn_status_string(st)); return 1; }
    snprintf(path, sizeof path, "%s/mha-out.bin", dir);
    f = fopen(path, "wb");
    if (!f || fwrite(out, sizeof *out, (size_t)n * E, f) != (size_t)n * E) { fprintf(stderr, "native-mha: cannot write %s\n", path); return 1; }
    fclose(f);
    double t0 = now_ms();
    forward();
    double once = now_ms() - t0;
    reps = once >= target_ms ? 1 : (int)(target_ms / (once > 1e-4 ? once : 1e-4)) + 1;
    count = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    char line[256];
    double target;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "load %d %d %d %lf", &n, &E, &H, &target) == 4) {
            if (load(argv[1], target)) return 1;
            printf("{\"n\": %d, \"reps\": %d}\n", n, reps);
        } else if (line[0] == 's') {
            double t0 = now_ms();
            for (int i = 0; i < reps; i++) forward();
            double t = (now_ms() - t0) / reps;
            if (count < MAX_SAMPLES) ms[count++] = t;
            printf("{\"ms\": %.6f}\n", t);
        } else if (line[0] == 'd') {
            qsort(ms, (size_t)count, sizeof ms[0], cmp_double);
            double med = count == 0 ? 0.0 : count % 2 ? ms[count / 2] : 0.5 * (ms[count / 2 - 1] + ms[count / 2]);
            printf("{\"rounds\": %d, \"median_ms\": %.6f, \"min_ms\": %.6f}\n", count, med, count ? ms[0] : 0.0);
        } else {
            fprintf(stderr, "native-mha: bad command: %s", line);
            return 2;
        }
        fflush(stdout);
    }
    free(buf); free(out); free(ws);
    return 0;
}
