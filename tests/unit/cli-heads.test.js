// `attnmap heads` (bin/heads.js), run as a child process the way a user runs it, on the shipped
// toy-zh (GPT-2), a tiny LLaMA-layout checkpoint with grouped key/value heads (random weights,
// scripts/random-checkpoint.js) and a BERT encoder of tests/golden/bert/. Every score the CLI
// prints is checked against the same score computed here, in plain JS from the definitions in
// docs/HEADS.md, over the full maps of forward(ids, { attention: true }): an independent reference.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { root } from '../helpers.js';
import { loadModel } from '../../web/model/model-node.js';
import { writeRandomCheckpoint } from '../../scripts/random-checkpoint.js';
import { blockPool } from '../../bin/heads.js';

const BIN = fileURLToPath(new URL('../../bin/attnmap.js', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [BIN, 'heads', ...args], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ATTNMAP_DEBUG: '' } });
const ok = (...args) => { const r = run(...args); assert.equal(r.status, 0, `exit status; stderr: ${r.stderr}`); return r.stdout; };
const BERT = path.join(root, 'tests/golden/bert/bert-encoder-f16');
const TEXT = '我看见那只猫在吃鱼。';

let tmp, LLAMA;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-cli-heads-'));
  LLAMA = path.join(tmp, 'llama');
  // a vocabulary of 30,000: --induction draws from ids 1,000 to 19,999
  writeRandomCheckpoint({
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 32, intermediate_size: 64, num_hidden_layers: 3,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, max_position_embeddings: 128, vocab_size: 30000,
    rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true, hidden_act: 'silu', bos_token_id: 0, eos_token_id: 0,
  }, LLAMA);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// ----------------------------------------------------------------------------
// the reference: docs/HEADS.md's definitions over one head's full map A (n, n), in float64

function referenceScores(A, n, repeat) {
  const a = (i, j) => A[i * n + j];
  const mean = (from, to, f) => { let s = 0; for (let i = from; i <= to; i++) s += f(i); return to >= from ? s / (to - from + 1) : 0; };
  const out = {
    sink: mean(1, n - 1, (i) => a(i, 0)),
    previous: mean(1, n - 1, (i) => a(i, i - 1)),
    self: mean(1, n - 1, (i) => a(i, i)),
    next: mean(1, n - 2, (i) => a(i, i + 1)),
    entropy: mean(1, n - 1, (i) => { let e = 0; for (let j = 0; j < n; j++) if (a(i, j) > 0) e -= a(i, j) * Math.log2(a(i, j)); return e; }),
    distance: mean(1, n - 1, (i) => { let d = 0; for (let j = 0; j < n; j++) d += a(i, j) * Math.abs(i - j); return d; }),
  };
  if (repeat) {
    out.induction = mean(repeat, n - 1, (i) => a(i, i - repeat + 1));
    out.duplicate = mean(repeat, n - 1, (i) => a(i, i - repeat));
  }
  return out;
}

/** Every score of every head, [role][layer][head], from forward(ids, { attention: true })'s maps. */
async function reference(folder, ids, { repeat, tokenTypes } = {}) {
  const model = await loadModel(folder, { threads: 1 });
  try {
    const { attention } = model.forward(ids, { attention: true, ...(tokenTypes ? { tokenTypes } : {}) });
    const out = {};
    attention.forEach((heads, l) => heads.forEach(({ data }, h) => {
      for (const [role, v] of Object.entries(referenceScores(data, ids.length, repeat))) ((out[role] ??= [])[l] ??= [])[h] = v;
    }));
    return { scores: out, config: model.config };
  } finally {
    model.dispose();
  }
}

// the CLI's JSON against the reference: the same roles, shapes and values (float32 sums in another order)
function assertScores(got, want, label) {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${label}: the roles`);
  for (const [role, layers] of Object.entries(want)) {
    assert.equal(got[role].length, layers.length, `${label} ${role}: layers`);
    layers.forEach((heads, l) => heads.forEach((e, h) => {
      const a = got[role][l][h];
      assert.ok(Math.abs(a - e) <= 2e-5 + 2e-5 * Math.abs(e), `${label} ${role} L${l} H${h}: ${a}, expected ${e} (|diff| ${Math.abs(a - e)})`);
    }));
  }
}

async function toyIds(text) {
  const m = await loadModel('toy-zh');
  try { return m.encode(text); } finally { m.dispose(); }
}

// ----------------------------------------------------------------------------

test('attnmap heads toy-zh --text --json: every score of every head equals the full maps\' (GPT-2)', async () => {
  const ids = await toyIds(TEXT);
  const got = JSON.parse(ok('toy-zh', '--text', TEXT, '--json'));
  const { scores } = await reference('toy-zh', ids);
  assert.deepEqual({ layers: got.layers, heads: got.heads, n: got.n }, { layers: 2, heads: 4, n: ids.length });
  assert.equal(got.repeat, undefined);
  assertScores(got.scores, scores, 'toy-zh');
  assert.ok(got.scores.next.flat().every((v) => v === 0), 'next is 0 in a decoder');
  // the same ids by --ids, comma-separated and as JSON: the same output
  assert.equal(ok('toy-zh', '--ids', ids.join(','), '--json'), ok('toy-zh', '--ids', JSON.stringify(ids), '--json'));
  assert.deepEqual(JSON.parse(ok('toy-zh', '--ids', ids.join(','), '--json')), got);
});

test('attnmap heads --induction S --seed N: a block of S distinct ordinary ids twice, induction and duplicate as the full maps give them', async () => {
  const got = JSON.parse(ok('toy-zh', '--induction', '12', '--seed', '7', '--json'));
  const { ids } = got;
  assert.deepEqual({ n: got.n, repeat: got.repeat, seed: got.seed }, { n: 24, repeat: 12, seed: 7 });
  assert.deepEqual(ids.slice(12), ids.slice(0, 12), 'the block, repeated');
  assert.equal(new Set(ids).size, 12, 'distinct ids within the block');
  // toy-zh's [PAD] 0, [UNK] 1 and its bos/eos 。 22 are never drawn: the pool is the 40 others
  assert.ok(ids.every((id) => id >= 2 && id < 43 && id !== 22), `ids ${ids}`);
  const toy = await loadModel('toy-zh');
  const { lo, hi, skip } = blockPool(toy);
  toy.dispose();
  assert.deepEqual({ lo, hi, skip: [...skip].sort((a, b) => a - b) }, { lo: 0, hi: 43, skip: [0, 1, 22] });
  const { scores } = await reference('toy-zh', ids, { repeat: 12 });
  assertScores(got.scores, scores, 'toy-zh induction');
  // seeded: the same seed gives the same block, another seed another one, no seed is seed 0
  assert.deepEqual(JSON.parse(ok('toy-zh', '--induction', '12', '--seed', '7', '--json')).ids, ids);
  assert.notDeepEqual(JSON.parse(ok('toy-zh', '--induction', '12', '--seed', '8', '--json')).ids, ids);
  assert.deepEqual(JSON.parse(ok('toy-zh', '--induction', '12', '--json')).ids, JSON.parse(ok('toy-zh', '--induction', '12', '--seed', '0', '--json')).ids);
});

test('attnmap heads on a LLaMA-layout checkpoint (grouped key/value heads): --induction draws ids 1,000 to 19,999; scores as the full maps\'', async () => {
  const got = JSON.parse(ok(LLAMA, '--induction', '40', '--seed', '3', '--json'));
  assert.deepEqual({ layers: got.layers, heads: got.heads, n: got.n }, { layers: 3, heads: 4, n: 80 });
  assert.ok(got.ids.every((id) => id >= 1000 && id < 20000), `ids ${got.ids}`);
  assert.deepEqual(got.ids.slice(40), got.ids.slice(0, 40));
  const { scores } = await reference(LLAMA, got.ids, { repeat: 40 });
  assertScores(got.scores, scores, 'llama');
});

test('attnmap heads on a BERT encoder: next is measured (every token sees the next), scores as the full maps\'', async () => {
  const m = await loadModel(BERT);
  const { ids, tokenTypes } = m.encode('猫吃鱼');
  m.dispose();
  const got = JSON.parse(ok(BERT, '--text', '猫吃鱼', '--json'));
  const { scores } = await reference(BERT, ids, { tokenTypes });
  assertScores(got.scores, scores, 'bert');
  assert.ok(got.scores.next.flat().some((v) => v > 0), 'an encoder\'s rows see the next token');
  assert.match(ok(BERT, '--text', '猫吃鱼'), /^next: attention on the next token\n {2}L\d H\d {2}0\.\d{3}$/m);
});

test('attnmap heads: the text lists, per role, the top K heads by score, highest first', async () => {
  const ids = await toyIds(TEXT);
  const { scores } = await reference('toy-zh', ids);
  const lines = ok('toy-zh', '--text', TEXT, '--top', '3').trimEnd().split('\n');
  assert.equal(lines[0], `2 layers × 4 heads, ${ids.length} tokens`);
  assert.ok(lines.includes('next: 0 in a decoder (no token sees a later one)'));
  for (const role of ['sink', 'previous', 'self', 'entropy', 'distance']) {
    const at = lines.findIndex((l) => l.startsWith(`${role}: `));
    assert.ok(at > 0, `a ${role} section`);
    const listed = lines.slice(at + 1, at + 4).map((l) => /^ {2}L(\d+) H(\d+) {2}(\d+\.\d{3})$/.exec(l));
    assert.ok(listed.every(Boolean), `${role}: 3 lines "  Ll Hh  0.000": ${lines.slice(at + 1, at + 4)}`);
    assert.doesNotMatch(lines[at + 4] ?? '', /^ {2}L/, `${role}: only 3 heads`);
    // the reference's top 3, the printed values within their rounding
    const want = scores[role].flatMap((hs, l) => hs.map((v, h) => ({ l, h, v }))).sort((a, b) => b.v - a.v);
    listed.forEach(([, l, h, v], k) => {
      assert.ok(Math.abs(Number(v) - want[k].v) <= 5e-4 + 1e-5, `${role} #${k + 1}: printed L${l} H${h} ${v}, the reference's is L${want[k].l} H${want[k].h} ${want[k].v}`);
      assert.ok(Math.abs(scores[role][l][h] - want[k].v) <= 1e-5, `${role} #${k + 1}: L${l} H${h} scores ${scores[role][l][h]}, not the ${k + 1}th highest ${want[k].v}`);
    });
    assert.ok(listed.every((m, k) => k === 0 || Number(m[3]) <= Number(listed[k - 1][3])), `${role}: highest first`);
  }
  // with --induction, induction and duplicate are listed too; the default is 5 heads
  const ind = ok('toy-zh', '--induction', '8').split('\n');
  assert.equal(ind[0], '2 layers × 4 heads, 16 tokens, a random block of 8 tokens (seed 0) repeated twice');
  for (const role of ['induction', 'duplicate']) {
    const at = ind.findIndex((l) => l.startsWith(`${role}: `));
    assert.ok(at > 0 && ind.slice(at + 1, at + 6).every((l) => /^ {2}L\d H\d {2}\d\.\d{3}$/.test(l)), `${role}: 5 heads`);
  }
});

test('attnmap heads --svg FILE: a well-formed grid of layers × heads with the chosen score\'s values', async () => {
  const file = path.join(tmp, 'grid.svg');
  const out = JSON.parse(ok(LLAMA, '--induction', '20', '--json', '--svg', file));
  const svg = fs.readFileSync(file, 'utf8');
  assert.match(svg, /^<svg[^>]+xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const cells = [...svg.matchAll(/<rect class="cell"[^>]*?data-row="(\d+)" data-col="(\d+)" data-value="([^"]*)"/g)];
  assert.equal(cells.length, 3 * 4, 'one cell per head');
  for (const [, l, h, v] of cells) assert.ok(Math.abs(Number(v) - out.scores.induction[l][h]) <= 1e-6, `L${l} H${h}: ${v} vs ${out.scores.induction[l][h]}`);
  const rowLabels = [...svg.matchAll(/<text class="row-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
  const colLabels = [...svg.matchAll(/<text class="col-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
  assert.deepEqual(rowLabels, ['L0', 'L1', 'L2']);
  assert.deepEqual(colLabels, ['H0', 'H1', 'H2', 'H3']);
  assert.match(svg, /induction · 3 layers × 4 heads · 40 tokens/);
  // --score picks another; without --induction the default is previous
  ok('toy-zh', '--text', TEXT, '--svg', file, '--score', 'entropy', '--lang', 'en');
  assert.match(fs.readFileSync(file, 'utf8'), /entropy · 2 layers × 4 heads/);
  ok('toy-zh', '--text', TEXT, '--svg', file);
  assert.match(fs.readFileSync(file, 'utf8'), /previous · 2 layers × 4 heads/);
  const xmllint = spawnSync('xmllint', ['--noout', file], { encoding: 'utf8' });
  if (!xmllint.error) assert.equal(xmllint.status, 0, `xmllint says ${xmllint.stderr}`);
});

function assertUsageError(r, pattern) {
  assert.equal(r.status, 2, `exit status; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^attnmap: [^\n]+\n$/, 'one line starting "attnmap: "');
  assert.match(r.stderr, pattern);
}

test('attnmap heads: bad arguments give one line and exit 2, with what was expected', () => {
  assertUsageError(run(), /expected one model: attnmap heads MODEL/);
  assertUsageError(run('toy-zh'), /give one of --text TEXT, --ids IDS or --induction S$/m);
  assertUsageError(run('toy-zh', '--text', '猫', '--ids', '1,2'), /received --text and --ids/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--seed', '1'), /--seed goes with --induction/);
  assertUsageError(run('toy-zh', '--induction', '0'), /--induction must be a whole number from 1 to/);
  assertUsageError(run('toy-zh', '--induction', '3', '--seed', '-1'), /--seed/);
  assertUsageError(run('toy-zh', '--induction', '17'), /--induction 17 makes 34 tokens; this model reads at most 32: use --induction 16 or less/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--top', '0'), /--top must be a whole number from 1 to 1000; received "0"/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--svg', 'x.svg', '--score', 'nope'), /--score must be one of sink, previous, self, next, entropy, distance, induction, duplicate/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--svg', 'x.svg', '--score', 'induction'), /--score induction needs --induction S/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--score', 'sink'), /--score goes with --svg FILE/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--bogus'), /Unknown option '--bogus'/);
  assertUsageError(run('toy-zh', '--ids', '1,99'), /--ids: 99 is not a token id of this model \(vocab_size = 43: ids 0 to 42\)/);
  assertUsageError(run('toy-zh', '--ids', '[1,2'), /--ids is not valid JSON/);
  assertUsageError(run('toy-zh', '--ids', 'a,b'), /--ids must be comma-separated token ids/);
  assertUsageError(run('toy-zh', '--text', '猫'), /1 token: the scores need at least 2/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--svg', path.join(tmp, 'no', 'such', 'dir.svg')), /--svg ".*dir\.svg": the folder ".*such" does not exist/);
  assertUsageError(run('toy-zh', '--text', '猫吃', '--svg', tmp), /--svg ".*" is a folder: give a file name/);
  assertUsageError(run(path.join(root, 'tests/golden'), '--ids', '1,2'), /has no config\.json/);
  const help = run('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: attnmap heads MODEL/);
  assert.match(spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout, /attnmap heads MODEL/);
});
