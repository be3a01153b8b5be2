// gguf-tokenizer.js - the tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), written
// as the tokenizer.json that Hugging Face's converters would write for it, so that
// load-tokenizer.js reads it on its one path (@huggingface/tokenizers): one tokenizer engine.
//
//   import { ggufMetadata, ggufTokenizerJson } from './gguf-tokenizer.js';   // load-tokenizer.js imports it on first use
//   const { json, ranks } = ggufTokenizerJson(await ggufMetadata(bytesOrBlobOrParsed));
//
// What is read, and what llama.cpp (src/llama-vocab.cpp, llama_vocab::impl::load and tokenize)
// does with it:
// - tokenizer.ggml.model 'gpt2': byte-level BPE. tokens by id, token_type, merges ("left right",
//   split at the first space after the first byte, as llama.cpp does) -> model BPE; the
//   pre-tokenizer chosen by tokenizer.ggml.pre (PRE below: llama.cpp's regular expressions for it,
//   as Split pre-tokenizers that keep what they do not match, as its unicode_regex_split does);
//   ignore_merges for Llama 3 (a piece that is a token is that token). No pre: 'default', with
//   llama.cpp's warning that quality suffers. Another pre is refused by name.
// - tokenizer.ggml.model 'llama': SentencePiece BPE (Llama 2, TinyLlama, Mistral). tokens, scores,
//   token_type -> model BPE with byte_fallback (<0xXX>), its merges derived from the scores as
//   transformers' SentencePieceExtractor does (every split of a token into two tokens, the
//   token's score deciding the rank, a higher score first); normalizer Prepend ▁ (when
//   tokenizer.ggml.add_space_prefix, default true) + Replace ' ' -> ▁; decoder ▁ -> ' ',
//   ByteFallback, Fuse, Strip one leading space. llama.cpp's SPM merges, at each step, the adjacent
//   pair whose concatenation is the token of highest score, the leftmost of equal ones; a BPE
//   merges the pair of lowest rank, the leftmost of equal ones. With one rank per merge (the
//   merges' order) the two differ when different pieces have equal scores (a tie llama.cpp settles
//   by position, the ranks by id). So ranks are returned beside the json: every merge of one score
//   has the rank of the first, and shareRanks gives the library those: then the highest score
//   wins and the position settles a tie, as in llama.cpp, for any scores.
//   tests/unit/gguf-tokenizer.test.js checks it against a direct implementation of llama.cpp's
//   algorithm, on a vocabulary learnt there and with its scores shuffled and tied.
// - token types (llama.cpp's llama_token_type): 2 unknown, 3 control, 4 user-defined are added
//   tokens, matched in the text before anything else as HF does (special unless user-defined);
//   1 normal, 5 unused, 6 byte, 0 undefined are the vocabulary's. Some types are then set by the
//   token's text, as llama.cpp sets them whatever the file says (BY_TEXT below): an
//   end-of-generation marker (</s>, <|im_end|>, <|endoftext|>, …) is a control token, and so is a
//   fill-in-the-middle one (<|fim_prefix|>, …) when no *_token_id key names that role. So Qwen's
//   </s>, ordinary text to HF (3 tokens), is one token here as in llama.cpp. A tokenizer.json is
//   read as HF reads it, without this.
// - no normalizer: the file has none (Qwen's tokenizer.json has NFC; llama.cpp applies none either).
// - tokenizer.ggml.bos_token_id, eos_token_id, unknown_token_id, padding_token_id (defaults for
//   'llama' as llama.cpp's: 1, 2, 0); add_bos_token (default true for 'llama' and Llama 3's pre,
//   else false) and add_eos_token (default false) -> a TemplateProcessing post-processor. llama.cpp
//   gives 'gpt2' vocabularies BOS and EOS 11 when the keys are missing; here add_bos_token without
//   a bos_token_id is refused instead.
// Besides the tests, a one-off check with llama.cpp itself (node-llama-cpp 3.21.1, vocab-only
// files) gave the same ids on Qwen3's, Llama 3's and GPT-2's vocabularies (gpt-2, smollm, default)
// and on SentencePiece ones (learnt, with scores shuffled, with scores tied);
// tests/unit/gguf-llamacpp.test.js repeats it, with the markers of BY_TEXT typed normal too.
//
// Checked, each failure INVALID_MODEL "GGUF metadata: <key> …" (TOO_LARGE past MAX_VOCAB tokens
// or MAX_MERGES merges): the types of the keys; token_type and scores as long as tokens; token
// types 0..6; scores finite; every *_token_id key an id of the vocabulary; no token twice (as
// llama.cpp; an empty token is "[EMPTY_<id>]", as in llama.cpp); each merge two tokens whose
// concatenation is a token too (as HF's tokenizers requires).
import { ErrorCode, fail, describe, quote } from '../../core/errors.js';
import { parseGguf, openGguf } from '../load/gguf.js';
import { blobSource } from '../load/weights.js';
import { KNOWN_PATTERNS, MAX_VOCAB, MAX_MERGES } from './load-tokenizer.js';

const bad = (message) => fail(ErrorCode.INVALID_MODEL, `GGUF metadata: ${message}`);
const tooLarge = (message) => fail(ErrorCode.TOO_LARGE, `GGUF metadata: ${message}`);

const K = (name) => `tokenizer.ggml.${name}`;
const MODELS = ['gpt2', 'llama'];
const TYPE = { UNDEFINED: 0, NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 };
const ADDED = new Set([TYPE.UNKNOWN, TYPE.CONTROL, TYPE.USER_DEFINED]);

// The token types llama.cpp sets by a token's text when it loads a vocabulary, whatever
// tokenizer.ggml.token_type says ("control-looking token: … was not control-type; … its type will
// be overridden"): src/llama-vocab.cpp, llama_vocab::impl::load, its "auto-detect special tokens by
// text" and end-of-generation lists, as read in the llama.cpp node-llama-cpp 3.21.1 bundles and
// runs (release v0.4.0, node_modules/node-llama-cpp/llama/gitRelease.bundle). In its order:
// - fillInTheMiddle: for each role that no tokenizer.ggml.<key>_token_id names, its texts become
//   control tokens. (llama.cpp takes the first match its hash map yields, an order its C++ library
//   decides, and leaves another text of the same role as it was; here a vocabulary with two, none
//   of the tested ones, gets both marked.) Its end-of-turn (eot) and end-of-message (eom) texts,
//   detected the same way, are all end-of-generation texts too: not listed apart.
// - endOfGeneration: control tokens, always.
// - userDefined: user-defined tokens (gpt-oss's, which llama.cpp always writes out).
// - exceptions: text -> type, when the vocabulary has, of each group of `beside`, one text.
// llama.cpp adds the control flag to a token's others; for matching in the text (and here) the
// control flag decides. Its unused flag (control tokens named "*unused*") changes no id.
const BY_TEXT = Object.freeze({
  fillInTheMiddle: [
    { keys: ['fim_pre', 'prefix'], texts: ['<|fim_prefix|>', '<fim-prefix>', '<fim_prefix>', '<｜fim▁begin｜>', '<PRE>', '▁<PRE>', '<|code_prefix|>', '<|prefix|>'] },
    { keys: ['fim_suf', 'suffix'], texts: ['<|fim_suffix|>', '<fim-suffix>', '<fim_suffix>', '<｜fim▁hole｜>', '<SUF>', '▁<SUF>', '<|code_suffix|>', '<|suffix|>'] },
    { keys: ['fim_mid', 'middle'], texts: ['<|fim_middle|>', '<fim-middle>', '<fim_middle>', '<｜fim▁end｜>', '<MID>', '▁<MID>', '<|code_middle|>', '<|middle|>'] },
    { keys: ['fim_pad'], texts: ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'] },
    { keys: ['fim_rep'], texts: ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'] },
    { keys: ['fim_sep'], texts: ['<|file_sep|>'] },
  ],
  endOfGeneration: ['<|eot_id|>', '<|im_end|>', '<|end|>', '<|return|>', '<|call|>', '<|flush|>', '<|calls|>', '<end_of_turn>',
    '<|endoftext|>', '</s>', '<|eom_id|>', '<EOT>', '_<EOT>', '[EOT]', '[EOS]', '<|end_of_text|>', '<end_of_utterance>', '<eos>',
    '<turn|>', '<|tool_response>', '<｜end▁of▁sentence｜>', '[e~['],
  userDefined: ['<|channel|>', '<|message|>', '<|start|>', '<|constrain|>'],
  exceptions: [
    { text: '<|end|>', type: TYPE.USER_DEFINED, beside: [['<|call|>', '<|calls|>'], ['<|return|>', '<|flush|>']] },   // gpt-oss, solar-open
    { text: '</s>', type: TYPE.NORMAL, beside: [['<|tool_response>']] },   // Gemma 4
  ],
});

// llama.cpp's regular expressions (llm_tokenizer_bpe), spelled as Hugging Face's files spell them
// where one has them (GPT-2's, Llama 3's, Qwen2's: load-tokenizer.js KNOWN_PATTERNS)
const [GPT2, LLAMA3, QWEN2] = KNOWN_PATTERNS;
const DIGIT = '\\p{N}', DIGITS = '\\p{N}+', PUNCTUATION = '[\\p{P}\\$\\+<=>\\^~\\|]+', THREE_DIGITS = '[0-9][0-9][0-9]';

/** The regular expressions this file adds to the ones a tokenizer.json may have (they come from here, not from a file). */
export const GGUF_PATTERNS = Object.freeze([DIGIT, DIGITS, PUNCTUATION, THREE_DIGITS]);

// tokenizer.ggml.pre -> the splits llama.cpp makes, in order (each on the pieces of the one
// before), ignore_merges and add_bos as llama.cpp sets them for that name
const PRE_TYPES = {
  gpt2: { splits: [GPT2] },
  llama3: { splits: [LLAMA3], ignoreMerges: true, addBos: true },
  qwen2: { splits: [QWEN2] },
  smollm: { splits: [DIGIT, GPT2] },
  default: { splits: [PUNCTUATION, GPT2, DIGITS, THREE_DIGITS] },
};
const PRE = {
  'gpt-2': PRE_TYPES.gpt2,
  'llama-bpe': PRE_TYPES.llama3, llama3: PRE_TYPES.llama3, 'llama-v3': PRE_TYPES.llama3,
  qwen2: PRE_TYPES.qwen2, 'deepseek-r1-qwen': PRE_TYPES.qwen2,
  smollm: PRE_TYPES.smollm,
  default: PRE_TYPES.default,
};

/** The tokenizer.ggml.pre values read. */
export const GGUF_PRE = Object.freeze(Object.keys(PRE));

/**
 * The metadata of a GGUF file (a Map): gguf is the file's bytes (Uint8Array, ArrayBuffer), a Blob
 * or File (read by ranges: only its header), what parseGguf or openGguf gave ({ metadata }), or
 * that metadata Map. Only the header is read: a vocab-only file is enough.
 */
export async function ggufMetadata(gguf) {
  if (gguf instanceof Map) return gguf;
  if (gguf instanceof Uint8Array || gguf instanceof ArrayBuffer) return parseGguf(gguf, 'tokenizer.gguf').metadata;
  if (typeof Blob === 'function' && gguf instanceof Blob) return (await openGguf(blobSource(gguf), gguf.name || 'tokenizer.gguf')).metadata;
  if (gguf !== null && typeof gguf === 'object' && gguf.metadata instanceof Map) return gguf.metadata;
  return fail(ErrorCode.INVALID_ARGUMENT, `loadTokenizer: gguf must be a .gguf file's bytes (a Uint8Array or ArrayBuffer), a Blob or File, or parseGguf's result { metadata }; received ${describe(gguf)}`);
}

/**
 * { json, ranks } for the tokenizer of GGUF metadata (a Map), every key checked first: json the
 * tokenizer.json (an object); ranks, for a SentencePiece vocabulary, each merge's rank (equal for
 * equal scores), else null.
 */
export function ggufTokenizerJson(metadata) {
  const get = (key) => metadata.get(key);
  const model = get(K('model'));
  if (model === undefined) bad(`${K('model')} is missing: the file has no tokenizer (${MODELS.join(', ')} are read)`);
  if (!MODELS.includes(model)) bad(`${K('model')} is ${typeof model === 'string' ? quote(model, 40) : describe(model)}; attnmap reads ${MODELS.map((m) => quote(m)).join(' and ')} (byte-level BPE and SentencePiece BPE)`);
  const tokens = readTokens(get(K('tokens')));
  const n = tokens.length;
  const fileTypes = readTypes(get(K('token_type')), n);
  const vocab = vocabOf(tokens);
  const spm = model === 'llama';
  const pre = spm ? null : readPre(get(K('pre')));
  const ids = readIds(metadata, n, spm ? { bos: 1, eos: 2, unknown: 0 } : {});
  const types = typesByText(fileTypes, n, vocab, ids);
  const addBos = readBool(get, 'add_bos_token', spm || Boolean(pre.addBos));
  const addEos = readBool(get, 'add_eos_token', false);
  if (addBos && ids.bos === undefined) bad(`${K('add_bos_token')} is true but ${K('bos_token_id')} is not set`);
  if (addEos && ids.eos === undefined) bad(`${K('add_eos_token')} is true but ${K('eos_token_id')} is not set`);
  const unk = ids.unknown === undefined ? null : tokens[ids.unknown];
  const common = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: addedTokens(tokens, types),
    post_processor: template(addBos ? tokens[ids.bos] : null, addEos ? tokens[ids.eos] : null, vocab),
  };
  if (spm) {
    const { merges, ranks } = spmMerges(tokens, readScores(get(K('scores')), n), vocab);
    const json = { ...common, ...sentencePiece(readBool(get, 'add_space_prefix', true)), model: bpe(vocab, merges, unk, { byte_fallback: true, fuse_unk: true }) };
    return { json, ranks };
  }
  if (get(K('scores')) !== undefined) readScores(get(K('scores')), n);   // not used, checked all the same
  const json = {
    ...common,
    normalizer: null,
    pre_tokenizer: preTokenizer(pre.splits),
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: bpe(vocab, readMerges(get(K('merges')), vocab), unk, { ignore_merges: Boolean(pre.ignoreMerges) }),
  };
  return { json, ranks: null };
}

/**
 * The library's BPE (@huggingface/tokenizers' model, passed by load-tokenizer.js) with ranks in
 * place of its own. It ranks each merge by its index in the merges and, of equal ranks, merges the
 * leftmost pair (its queue orders by rank + the pair's position / the word's length): merges given
 * one rank are settled by position, as llama.cpp settles SentencePiece merges of equal score. Its
 * table of ranks is checked to be what this expects first.
 */
export function shareRanks(model, merges, ranks) {
  const table = model?.bpe_ranks;
  if (!(table instanceof Map) || table.size !== merges.length || ranks.length !== merges.length || (merges.length > 0 && table.get(JSON.stringify(merges.at(-1))) !== merges.length - 1)) {
    fail(ErrorCode.INVALID_MODEL, 'the GGUF file\'s tokenizer: the library\'s BPE does not keep its merges\' ranks as attnmap expects (another version of @huggingface/tokenizers?)');
  }
  merges.forEach((m, i) => table.set(JSON.stringify(m), ranks[i]));
}

// ----------------------------------------------------------------------------
// the keys

// tokens by id: strings, an empty one renamed as llama.cpp does
function readTokens(tokens) {
  if (tokens === undefined) bad(`${K('tokens')} is missing`);
  if (!Array.isArray(tokens) || tokens.length === 0) bad(`${K('tokens')} must be a non-empty array of strings; received ${describe(tokens)}`);
  if (tokens.length > MAX_VOCAB) tooLarge(`${K('tokens')} has ${tokens.length} tokens; attnmap reads at most ${MAX_VOCAB} (the largest real vocabularies have 262,144)`);
  return tokens.map((t, i) => {
    if (typeof t !== 'string') bad(`${K('tokens')}[${i}] must be a string; received ${describe(t)}`);
    return t === '' ? `[EMPTY_${i}]` : t;
  });
}

// token text -> id (no prototype: a token may be spelled "__proto__"); no token twice
function vocabOf(tokens) {
  const vocab = Object.create(null);
  tokens.forEach((t, i) => {
    if (vocab[t] !== undefined) bad(`${K('tokens')} has the token ${quote(t)} twice, at ids ${vocab[t]} and ${i} (llama.cpp refuses such a vocabulary too)`);
    vocab[t] = i;
  });
  return vocab;
}

// token types, i32 as llama.cpp reads them; absent: all normal
function readTypes(types, n) {
  if (types === undefined) return null;
  if (!(types instanceof Int32Array)) bad(`${K('token_type')} must be an array of i32; received ${describe(types)}`);
  if (types.length !== n) bad(`${K('token_type')} has ${types.length} entries but ${K('tokens')} has ${n}`);
  const i = types.findIndex((t) => t < TYPE.UNDEFINED || t > TYPE.BYTE);
  if (i >= 0) bad(`${K('token_type')}[${i}] is ${types[i]}; token types are 0 to 6 (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)`);
  return types;
}

// the token types as llama.cpp sets them (BY_TEXT), in a copy of the file's (all normal without
// token_type); ids: the *_token_id keys read
function typesByText(fileTypes, n, vocab, ids) {
  const types = fileTypes === null ? new Int32Array(n).fill(TYPE.NORMAL) : Int32Array.from(fileTypes);
  const has = (text) => vocab[text] !== undefined;
  const set = (texts, type) => { for (const t of texts) if (has(t)) types[vocab[t]] = type; };
  for (const { keys, texts } of BY_TEXT.fillInTheMiddle) if (!keys.some((k) => Object.hasOwn(ids, k))) set(texts, TYPE.CONTROL);
  set(BY_TEXT.endOfGeneration, TYPE.CONTROL);
  set(BY_TEXT.userDefined, TYPE.USER_DEFINED);
  for (const { text, type, beside } of BY_TEXT.exceptions) if (beside.every((group) => group.some(has))) set([text], type);
  return types;
}

// SentencePiece scores: f32 (or i32, which llama.cpp also takes), one per token, finite
function readScores(scores, n) {
  if (scores === undefined) bad(`${K('scores')} is missing: a SentencePiece vocabulary (model "llama") merges by score`);
  if (!(scores instanceof Float32Array) && !(scores instanceof Int32Array)) bad(`${K('scores')} must be an array of f32; received ${describe(scores)}`);
  if (scores.length !== n) bad(`${K('scores')} has ${scores.length} entries but ${K('tokens')} has ${n}`);
  const i = scores.findIndex((s) => !Number.isFinite(s));
  if (i >= 0) bad(`${K('scores')}[${i}] is ${scores[i]}; scores must be finite`);
  return scores;
}

function readPre(pre) {
  if (pre === undefined) return PRE.default;   // llama.cpp: "missing pre-tokenizer type, using: 'default'"
  if (typeof pre !== 'string' || !Object.hasOwn(PRE, pre)) {
    bad(`${K('pre')} is ${typeof pre === 'string' ? quote(pre, 40) : describe(pre)}, a pre-tokenizer attnmap does not read; it reads ${GGUF_PRE.join(', ')}`);
  }
  return PRE[pre];
}

// every tokenizer.ggml.*_token_id an id of the vocabulary, returned by name ({ bos, eos, unknown,
// padding, fim_pre, … }, absent when the key is), with the model's defaults when in range
function readIds(metadata, n, defaults) {
  const ids = {};
  for (const [name, id] of Object.entries(defaults)) if (id < n) ids[name] = id;
  for (const [key, v] of metadata) {
    const m = /^tokenizer\.ggml\.(\w+)_token_id$/.exec(key);
    if (!m) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= n) bad(`${key} must be a token id, 0 to ${n - 1}; received ${describe(v)}`);
    ids[m[1]] = v;
  }
  return ids;
}

function readBool(get, name, fallback) {
  const v = get(K(name));
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') bad(`${K(name)} must be a bool; received ${describe(v)}`);
  return v;
}

// "left right" -> [left, right], split at the first space after the first byte (llama.cpp);
// both and their concatenation tokens of the vocabulary
function readMerges(merges, vocab) {
  if (merges === undefined) bad(`${K('merges')} is missing: a byte-level BPE vocabulary (model "gpt2") needs its merges`);
  if (!Array.isArray(merges)) bad(`${K('merges')} must be an array of strings; received ${describe(merges)}`);
  if (merges.length > MAX_MERGES) tooLarge(`${K('merges')} has ${merges.length} merges; attnmap reads at most ${MAX_MERGES} (Llama 3 has 280,147)`);
  return merges.map((m, i) => {
    const space = typeof m === 'string' ? m.indexOf(' ', 1) : -1;
    if (space < 0) bad(`${K('merges')}[${i}] must be two tokens "left right"; received ${typeof m === 'string' ? quote(m) : describe(m)}`);
    const pair = [m.slice(0, space), m.slice(space + 1)];
    for (const t of [...pair, pair[0] + pair[1]]) {
      if (vocab[t] === undefined) bad(`${K('merges')}[${i}] ${quote(m)}: ${quote(t)} is not in ${K('tokens')}`);
    }
    return pair;
  });
}

// ----------------------------------------------------------------------------
// tokenizer.json's parts

function bpe(vocab, merges, unk, options) {
  return { type: 'BPE', dropout: null, unk_token: unk, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false, ...options, vocab, merges };
}

// unknown, control and user-defined tokens, matched in the text as themselves
function addedTokens(tokens, types) {
  const added = [];
  types.forEach((type, id) => {
    if (ADDED.has(type)) added.push({ id, content: tokens[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: type !== TYPE.USER_DEFINED });
  });
  return added;
}

// BOS $A EOS (each when added), and for a pair BOS $A EOS BOS $B EOS (transformers' Llama template)
function template(bos, eos, vocab) {
  if (bos === null && eos === null) return null;
  const special = (token, typeId) => (token === null ? [] : [{ SpecialToken: { id: token, type_id: typeId } }]);
  const text = (id, typeId) => [...special(bos, typeId), { Sequence: { id, type_id: typeId } }, ...special(eos, typeId)];
  const specialTokens = {};
  for (const t of [bos, eos]) if (t !== null) specialTokens[t] = { id: t, ids: [vocab[t]], tokens: [t] };
  return { type: 'TemplateProcessing', single: text('A', 0), pair: [...text('A', 0), ...text('B', 1)], special_tokens: specialTokens };
}

// llama.cpp's splits, each keeping what it does not match, then the bytes as GPT-2's characters
function preTokenizer(splits) {
  return {
    type: 'Sequence',
    pretokenizers: [
      ...splits.map((regex) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false })),
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
}

// SentencePiece's text: spaces as ▁, one before each text (after a special token too, as in llama.cpp)
function sentencePiece(addSpacePrefix) {
  const replace = { type: 'Replace', pattern: { String: ' ' }, content: '▁' };
  return {
    normalizer: addSpacePrefix ? { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, replace] } : replace,
    pre_tokenizer: null,
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        ...(addSpacePrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : []),
      ],
    },
  };
}

// SentencePiece BPE merges from the scores (transformers' SentencePieceExtractor): for each token,
// by score from the highest (ties: the lower id), each split into two tokens, ordered by their ids;
// ranks: each merge's rank, the index of the first merge of its score
function spmMerges(tokens, scores, vocab) {
  const order = Array.from(tokens.keys()).sort((a, b) => scores[b] - scores[a] || a - b);
  const merges = [], ranks = [];
  let rank = 0, last = NaN;
  for (const id of order) {
    const piece = tokens[id], splits = [];
    let cut = 0;
    for (const ch of piece) {
      cut += ch.length;
      if (cut === piece.length) break;
      const left = vocab[piece.slice(0, cut)], right = vocab[piece.slice(cut)];
      if (left !== undefined && right !== undefined) splits.push([left, right]);
    }
    splits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    if (splits.length > 0 && scores[id] !== last) { rank = merges.length; last = scores[id]; }
    for (const [left, right] of splits) { merges.push([tokens[left], tokens[right]]); ranks.push(rank); }
    if (merges.length > MAX_MERGES) tooLarge(`the scores of ${K('tokens')} give more than ${MAX_MERGES} merges`);
  }
  return { merges, ranks };
}
