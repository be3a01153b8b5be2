// replay.c - a main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput on
// every file named on the command line (the committed corpus and regressions), so that
// tests/fuzz.test.js can replay them with any C compiler (gcc + sanitizers, no clang needed).
//   cc -fsanitize=address,undefined -Ic_src tests/fuzz/replay.c tests/fuzz/fuzz_forward.c c_src/attention.c -lm
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) { perror(argv[i]); return 2; }
        size_t cap = 1 << 16, size = 0;
        uint8_t *buf = malloc(cap);
        for (size_t got; (got = fread(buf + size, 1, cap - size, f)) > 0;) {
            size += got;
            if (size == cap) buf = realloc(buf, cap *= 2);
        }
        fclose(f);
        fprintf(stderr, "replay: %s (%zu bytes)\n", argv[i], size);
        LLVMFuzzerTestOneInput(buf, size);
        free(buf);
    }
    return 0;
}
