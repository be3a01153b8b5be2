// helpers-gguf-tokenizer.js - vocab-only GGUF files for the tokenizer tests (not a test file itself),
// written by tests/gguf-writer.js:
//
//   hfAsGguf(tokenizerJson, { pre, vocabSize, ids, addBos, retype }) -> metadata entries for writeGguf
//     a Hugging Face tokenizer.json as llama.cpp's convert_hf_to_gguf.py writes its vocabulary
//     (get_vocab_base): tokens by id, "[PAD<id>]" (UNUSED) for ids up to vocabSize that it lacks,
//     an added token CONTROL when it is special or looks special (<|…|>, <pad>, <mask>, <unused…>),
//     else USER_DEFINED, every other token NORMAL; model.merges as "left right"; pre as given;
//     ids { bos, eos, unknown, padding, fim_pre, … } as tokenizer.ggml.<name>_token_id;
//     retype { text: type }: those tokens' types instead (a file that got them wrong)
//   gpt2AsGguf(encoderJson, vocabBpe) -> entries: GPT-2's encoder.json and vocab.bpe, pre gpt-2
//   trainSentencePiece(texts, merges) -> { tokens, scores, types }: a small SentencePiece-style BPE
//     vocabulary learnt from texts (spaces as ▁, a ▁ before each text): <unk> <s> </s>, the 256
//     byte tokens <0x00>..<0xFF>, the pieces in the order they are learnt (scores -1, -2, …), the
//     characters (scores below every piece), then one user-defined token <sep>, laid out as Llama 2's
//   spmAsGguf({ tokens, scores, types }, extra) -> entries: model llama, bos 1, eos 2, unknown 0
//   vocabGguf(entries) -> the bytes of a GGUF file with that metadata and no tensors
import { writeGguf, gv } from './gguf-writer.js';

export const TOKEN_TYPE = Object.freeze({ NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 });

const looksSpecial = (t) => ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(t) || (t.startsWith('<|') && t.endsWith('|>')) ||
  (t.startsWith('<｜') && t.endsWith('｜>')) || (t.startsWith('<unused') && t.endsWith('>'));

const idKeys = (ids) => Object.entries(ids).map(([name, id]) => [`tokenizer.ggml.${name}_token_id`, gv.u32(id)]);

export function hfAsGguf(json, { pre, vocabSize = 0, ids = {}, addBos, retype = {} } = {}) {
  const byId = [], types = [];
  for (const [t, id] of Object.entries(json.model.vocab)) { byId[id] = t; types[id] = TOKEN_TYPE.NORMAL; }
  for (const a of json.added_tokens) {
    byId[a.id] = a.content;
    types[a.id] = a.special || looksSpecial(a.content) ? TOKEN_TYPE.CONTROL : TOKEN_TYPE.USER_DEFINED;
  }
  const n = Math.max(vocabSize, byId.length);
  for (let i = 0; i < n; i++) if (byId[i] === undefined) { byId[i] = `[PAD${i}]`; types[i] = TOKEN_TYPE.UNUSED; }
  for (const [text, type] of Object.entries(retype)) {
    const id = byId.indexOf(text);
    if (id < 0) throw new Error(`hfAsGguf: retype names ${JSON.stringify(text)}, which the vocabulary lacks`);
    types[id] = type;
  }
  return [
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.pre', gv.str(pre)],
    ['tokenizer.ggml.tokens', gv.arr('string', byId)],
    ['tokenizer.ggml.token_type', gv.arr('i32', types)],
    ['tokenizer.ggml.merges', gv.arr('string', json.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)))],
    ...idKeys(ids),
    ...(addBos === undefined ? [] : [['tokenizer.ggml.add_bos_token', gv.bool(addBos)]]),
  ];
}

export function gpt2AsGguf(encoderJson, vocabBpe) {
  const vocab = JSON.parse(encoderJson);
  const merges = vocabBpe.split('\n').slice(1).filter((l) => l !== '');
  const json = { model: { vocab, merges }, added_tokens: [{ id: 50256, content: '<|endoftext|>', special: true }] };
  return hfAsGguf(json, { pre: 'gpt-2', ids: { bos: 50256, eos: 50256 } });
}

// ----------------------------------------------------------------------------
// a SentencePiece-style vocabulary, learnt here (test data: what is checked against it is in the test)

export function trainSentencePiece(texts, merges) {
  const counts = new Map();   // word (its symbols joined by \u0000) -> count
  for (const text of texts) {
    for (const w of ('▁' + text.replaceAll(' ', '▁')).match(/▁+[^▁]*|[^▁]+/g)) {
      const key = Array.from(w).join('\u0000');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  let words = [...counts].map(([key, count]) => ({ symbols: key.split('\u0000'), count }));
  const charCount = new Map();
  for (const { symbols, count } of words) for (const c of symbols) charCount.set(c, (charCount.get(c) ?? 0) + count);
  const pieces = [], known = new Set(charCount.keys());
  for (let k = 0; k < merges; k++) {
    const pairs = new Map();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const p = symbols[i] + '\u0000' + symbols[i + 1];
        pairs.set(p, (pairs.get(p) ?? 0) + count);
      }
    }
    let best = null, bestCount = 0;
    for (const [p, c] of pairs) if (c > bestCount || (c === bestCount && p < best)) { best = p; bestCount = c; }
    if (best === null || bestCount < 2) break;
    const [a, b] = best.split('\u0000');
    if (!known.has(a + b)) { pieces.push(a + b); known.add(a + b); }
    words = words.map(({ symbols, count }) => {
      const out = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) { out.push(a + b); i++; } else out.push(symbols[i]);
      }
      return { symbols: out, count };
    });
  }
  const chars = [...charCount].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([c]) => c);
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  const tokens = ['<unk>', '<s>', '</s>', ...bytes, ...pieces, ...chars, '<sep>'];
  const scores = [0, 0, 0, ...bytes.map(() => 0), ...pieces.map((_, k) => -(k + 1)), ...chars.map((_, k) => -(pieces.length + k + 1)), 0];
  const types = [TOKEN_TYPE.UNKNOWN, TOKEN_TYPE.CONTROL, TOKEN_TYPE.CONTROL, ...bytes.map(() => TOKEN_TYPE.BYTE),
    ...pieces.map(() => TOKEN_TYPE.NORMAL), ...chars.map(() => TOKEN_TYPE.NORMAL), TOKEN_TYPE.USER_DEFINED];
  return { tokens, scores, types };
}

export function spmAsGguf({ tokens, scores, types }, extra = []) {
  return [
    ['tokenizer.ggml.model', gv.str('llama')],
    ['tokenizer.ggml.tokens', gv.arr('string', tokens)],
    ['tokenizer.ggml.scores', gv.arr('f32', scores)],
    ['tokenizer.ggml.token_type', gv.arr('i32', types)],
    ...idKeys({ bos: 1, eos: 2, unknown: 0 }),
    ['tokenizer.ggml.add_bos_token', gv.bool(true)],
    ['tokenizer.ggml.add_eos_token', gv.bool(false)],
    ...extra,
  ];
}

export const vocabGguf = (entries, arch = 'llama') => writeGguf({ metadata: [['general.architecture', gv.str(arch)], ...entries] }).bytes;
