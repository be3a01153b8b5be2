// `attnmap model` (bin/model.js), run as a child process the way a user runs it, on the golden
// checkpoints of tests/golden/gpt2/ (PyTorch's attention weights in expected.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/attnmap.js', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ATTNMAP_DEBUG: '' } });
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
  assertUsageError(run('model', WIDE, '--ids', '1,64'), /ids\[1\] must be an integer token id in \[0, vocab_size = 64\)/);
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
