// harness_io.h - the text protocol the native harnesses share with the Node tests:
// floats read from stdin, matrices written as "name rows cols v v v ..." with %.9g
// (exact for float32). Define HARNESS_NAME before including.
#ifndef ATTN_HARNESS_IO_H
#define ATTN_HARNESS_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *readf(size_t count) {
    float *p = malloc(count * sizeof *p + 4);
    for (size_t i = 0; i < count; i++) {
        if (scanf("%f", &p[i]) != 1) { fprintf(stderr, HARNESS_NAME ": short input\n"); exit(2); }
    }
    return p;
}

static void put(const char *name, const float *x, int rows, int cols) {
    printf("%s %d %d", name, rows, cols);
    for (size_t i = 0; i < (size_t)rows * cols; i++) printf(" %.9g", (double)x[i]);
    printf("\n");
}

#endif
