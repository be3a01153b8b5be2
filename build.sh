#!/usr/bin/env bash
# build.sh - compile the C core to WebAssembly.
#
#   bash build.sh            writes web/wasm/: five builds, each as NAME.wasm and NAME-wasm.js
#   bash build.sh OUTDIR     writes them into OUTDIR instead (the freshness test uses this)
#
#   attention           the default build (-O3)
#   attention-relaxed   the same with fused multiply-add (wasm relaxed SIMD)
#   attention-embed     the one-file embed's build: -Oz, without the tiled kernel (-DATTN_EMBED)
#   attention-model     the models' forward passes (c_src/gpt2.c, llama.c, bert.c) on the default core, for web/model/
#   attention-model-mt  the same on threads over a shared memory (web/model/threads/threads.js)
#
# Needs Debian's Emscripten: sudo apt-get install -y emscripten
# The build is a standalone module (no Emscripten JS glue: Debian's emcc 3.1.6 glue does
# not run on Node 20); web/core/attention.js is the small loader. web/wasm/attention-wasm.js holds the
# same bytes in base64 so that pages opened from disk (file://) and bundlers need no fetch.
set -euo pipefail

if ! command -v emcc >/dev/null 2>&1; then
  echo "build.sh: emcc not found. Install Emscripten: sudo apt-get install -y emscripten" >&2
  echo "          (the committed web/wasm/attention.wasm is used when you do not rebuild)" >&2
  exit 1
fi

here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/web/wasm}")"
cd "$here"
mkdir -p "$out"

# the exported C functions, listed once in web/core/exports.js (the loader checks the same list)
exports="$(node --input-type=module -e '
const { pathToFileURL } = await import("node:url");
const { WASM_FUNCTIONS } = await import(pathToFileURL(process.argv[1]).href);
console.log(WASM_FUNCTIONS.map((name) => "_" + name).join(","));
' "$here/web/core/exports.js")"
model_exports="$(node --input-type=module -e '
const { pathToFileURL } = await import("node:url");
const { WASM_MODEL_FUNCTIONS } = await import(pathToFileURL(process.argv[1]).href);
console.log(WASM_MODEL_FUNCTIONS.map((name) => "_" + name).join(","));
' "$here/web/core/exports.js")"

# -O3                     optimise for speed (the embed's build: -Oz, see below)
# -msimd128               the 4-wide vector code in attention.c becomes wasm SIMD
# -ffp-contract=off       no fused multiply-add: same rounding as the native build
# --no-entry              a library, no main()
# -sSTANDALONE_WASM       no JS glue imports; exports memory and _initialize
# -sALLOW_MEMORY_GROWTH   memory grows on demand (imports emscripten_notify_memory_growth)
# -sMAXIMUM_MEMORY=4GB    the most wasm32 can address
# -sINITIAL_MEMORY=1MB    small start; one 64 KiB page of stack is plenty (no recursion)
# -sSTACK_SIZE=64KB
# -sFILESYSTEM=0          no stdio, no file system
# -sMALLOC=emmalloc       the small allocator: one malloc and one free per call
flags=(-msimd128 -ffp-contract=off
  --no-entry -sSTANDALONE_WASM
  -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=1MB -sTOTAL_STACK=64KB
  -sFILESYSTEM=0 -sMALLOC=emmalloc
  -sEXPORTED_FUNCTIONS="$exports")
# -DATTN_NO_STATS          the teaching core alone computes no row statistics (attention.c: the models' own)
emcc c_src/attention.c c_src/rope.c c_src/mha.c -O3 "${flags[@]}" -DATTN_NO_STATS -o "$out/attention.wasm"

# The same core with fused multiply-add in the tiled kernel (wasm relaxed SIMD), for engines that
# have it; createAttention({ relaxed: true }) picks it. clang 14 writes the draft opcode of
# f32x4.relaxed_madd: scripts/patch-relaxed.js rewrites it to the standard one and checks it.
emcc c_src/attention.c c_src/rope.c c_src/mha.c -O3 "${flags[@]}" -DATTN_NO_STATS -mrelaxed-simd -DATTN_RELAXED -o "$out/attention-relaxed.wasm"
node scripts/patch-relaxed.js "$out/attention-relaxed.wasm"

# The one-file embed's build (web/dist/attention-heatmap.min.js): optimised for size, and without
# the tiled kernel (-DATTN_EMBED: the element always asks for the weights, which the row path
# computes, so the tiled path never runs there) and without RoPE (c_src/rope.c keeps only
# attn_rope's "not in this build" there). Same sources, same exports, and the same bits as the
# default build wherever weights are asked for. -Oz: smaller gzipped than -Os.
# -mbulk-memory: memcpy and memset are the memory.copy and memory.fill instructions, not libc's
# loops (250 B less gzipped); every engine with wasm SIMD (-msimd128) has bulk memory.
emcc c_src/attention.c c_src/rope.c c_src/mha.c -Oz "${flags[@]}" -mbulk-memory -DATTN_EMBED -o "$out/attention-embed.wasm"

# The models (web/model/runtime.js): the default core (with rope.c), c_src/gpt2.c, linear.c, llama.c,
# bert.c and their per-head job (heads.c), its own export list
# (WASM_MODEL_FUNCTIONS). GPT-2 small's parameters are ~500 MB of float32: memory grows to what
# the model needs, up to wasm32's 4 GiB.
# Compiled at -O3 file by file, then linked at -O1: Binaryen's -O2/-O3 link passes (they inline
# the matmul kernels into their callers) made V8's code for GPT-2 small's forward pass over 64
# tokens 16 % slower (423 → 491 ms, the same bits; docs/BENCHMARKS.md).
objs="$(mktemp -d)"
for f in attention rope mha gpt2 linear llama bert heads parallel; do
  emcc -c "c_src/$f.c" -O3 -msimd128 -ffp-contract=off -o "$objs/$f.o"
done
emcc "$objs"/*.o -O1 "${flags[@]}" -sEXPORTED_FUNCTIONS="$model_exports" -o "$out/attention-model.wasm"
rm -rf "$objs"

# The same on threads (issue 26, web/model/threads/threads.js): a shared memory that the host makes and
# every worker's instance of this module imports (-sIMPORTED_MEMORY, --shared-memory: the data
# is written once, by the first instance), atomics and bulk memory, and -DATTN_THREADS:
# c_src/parallel.c hands each job's parts to the host's env.attn_parallel. No Emscripten
# pthreads: the host runs the workers; each gets its own stack (stackRestore, exported).
objs="$(mktemp -d)"
for f in attention rope mha gpt2 linear llama bert heads parallel; do
  emcc -c "c_src/$f.c" -O3 -msimd128 -matomics -mbulk-memory -ffp-contract=off -DATTN_THREADS -o "$objs/$f.o"
done
emcc "$objs"/*.o -O1 "${flags[@]}" -matomics -mbulk-memory -sIMPORTED_MEMORY -Wl,--shared-memory \
  -sERROR_ON_UNDEFINED_SYMBOLS=0 -sEXPORTED_FUNCTIONS="$model_exports" -o "$out/attention-model-mt.wasm"
rm -rf "$objs"

# each wasm also as a JS module holding it in base64 (no fetch: Node, bundlers, file:// and CSPs)
# (the hash covers what the builds are made of: scripts/start.js sourcesHash() hashes the same)
hash="$(cat c_src/*.c c_src/*.h build.sh web/core/exports.js | sha256sum | cut -c1-16)"
for name in attention attention-relaxed attention-embed attention-model attention-model-mt; do
  node -e '
const fs = require("fs");
const [wasm, js, hash] = process.argv.slice(1);
const b64 = fs.readFileSync(wasm).toString("base64");
fs.writeFileSync(js, "// Generated by build.sh from c_src/ (sources sha256 " + hash + "). Do not edit.\n" +
  "export default \"" + b64 + "\";\n");
' "$out/$name.wasm" "$out/$name-wasm.js" "$hash"
  echo "build.sh: wrote $out/$name.wasm ($(wc -c < "$out/$name.wasm") bytes) and $out/$name-wasm.js"
done

# the page's classic-script bundle (web/dist/page.js), the one-file embed
# (web/dist/attention-heatmap.min.js) and the models' bundle (web/dist/attnmap-model.js)
# embed these bytes too (and web/core/)
if [ "$out" = "$here/web/wasm" ]; then
  if [ -d node_modules/esbuild ]; then
    node scripts/build-page.js
    node scripts/build-embed.js
    node scripts/build-model.js
  else
    echo "build.sh: run 'npm install' then 'npm run build:page', 'npm run build:embed' and 'npm run build:model' to update web/dist/" >&2
  fi
fi
