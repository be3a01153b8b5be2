// plan.js - what a run measures and for how long: the sizes, rounds and durations of a full run
// and of a quick one (BENCH_QUICK=1 or --quick), the limit on disagreement, the implementations' names.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..');
export const QUICK = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
export const TOLERANCE = 1e-4;
export const progress = (msg) => process.stderr.write(`bench: ${msg}\n`);

// sizes and rounds (fewer rounds where one call takes seconds); quick mode stops at 1024
export const SIZES = [
  { n: 3, d: 8, rounds: QUICK ? 7 : 41 },
  { n: 64, d: 64, rounds: QUICK ? 7 : 41 },
  { n: 256, d: 64, rounds: QUICK ? 5 : 25 },
  { n: 1024, d: 64, rounds: QUICK ? 3 : 15 },
  { n: 2048, d: 64, rounds: QUICK ? 0 : 11 },
  { n: 4096, d: 64, rounds: QUICK ? 0 : 9 },
].filter((s) => s.rounds > 0);
export const SAMPLE_MS = QUICK ? 2 : 5;         // target duration of one sample
export const WARMUP_MS = QUICK ? 300 : 1000;    // per implementation and size, before calibrating
export const TINY = { calls: QUICK ? 2000 : 10000, batches: QUICK ? 5 : 15 };
export const COLD_RUNS = QUICK ? 3 : 15;
export const MEMORY_N = QUICK ? 1024 : 4096;
export const IMPLS = ['ours', 'plain', 'ort', 'tf'];
export const LABEL = { ours: 'attnmap', plain: 'plain JS', ort: 'onnxruntime-web', tf: 'TF.js wasm', native: 'native C' };
// GPT-2 small's attention layer (d_model 768, 12 heads of 64) at n = 1024 tokens; quick mode
// runs a 128-token layer of the same width
export const MHA = { n: QUICK ? 128 : 1024, dModel: 768, heads: 12, rounds: QUICK ? 3 : 11 };
// plain JS needs seconds per call at large n: fewer samples there, so that the run stays near 5 minutes
export const MAX_SAMPLES = { plain: { 1024: 7, 2048: 3, 4096: 1 } };
// `node bench/bench.js --only model|llama|pool|threads|heads|gguf`: one section alone
export const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
if (ONLY !== null && !['model', 'llama', 'pool', 'threads', 'heads', 'gguf'].includes(ONLY)) throw new Error(`bench: --only takes "model", "llama", "pool", "threads", "heads" or "gguf"; received ${ONLY}`);
// the whole model (bench/model.js): forwards over forwardN tokens (rounds each), greedy decoding
// of newTokens after a prompt (kvReps runs; recomputing timed at every stride-th step); quick mode
// stays at n = 64. The logits' agreement limit (they reach about ±30 with the random weights).
export const MODEL = QUICK
  ? { forwardN: [64], rounds: { 64: 3 }, prompt: 56, newTokens: 8, kvReps: 2, stride: 4 }
  : { forwardN: [64, 256], rounds: { 64: 9, 256: 7 }, prompt: 224, newTokens: 32, kvReps: 5, stride: 4 };
export const MODEL_TOLERANCE = 1e-3;
// The LLaMA family (bench/llama.js): a checkpoint in `shape`'s exact shapes (scripts/random-checkpoint.js);
// forwards over forwardN tokens (rounds each); KV-cache steps at each of contexts (`steps` one-token
// steps ending at that context per run, decodeRuns runs); Qwen3-0.6B's shape (`second`: its load, a
// forward over secondN tokens, secondRuns rounds, and its steps at contexts[0]). Quick mode: a
// smoke run on SmolLM2-135M's shape (LLaMA, 270 MB), one context, no second shape. The logits'
// agreement limit is relative: max |diff| <= LLAMA_TOLERANCE * max |logit| (they reach about ±250).
export const LLAMA = QUICK
  ? { shape: 'smollm2-135m', forwardN: [32], rounds: { 32: 2 }, contexts: [32], steps: 4, decodeRuns: 2, second: null }
  : { shape: 'qwen2.5-0.5b', forwardN: [32, 128], rounds: { 32: 7, 128: 5 }, contexts: [32, 128], steps: 4, decodeRuns: 5,
    second: 'qwen3-0.6b', secondN: 32, secondRuns: 5 };
export const LLAMA_TOLERANCE = 1e-3;
