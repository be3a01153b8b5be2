// load-tokenizer.js - a checkpoint's tokenizer from its files, whichever kind they are.
//
//   import { loadTokenizer } from './load-tokenizer.js';
//   const tok = await loadTokenizer({ tokenizer: tokenizerJsonText, tokenizerConfig });   // Qwen3, Llama 3, …
//   const gpt2 = await loadTokenizer({ vocab: vocabJsonText, merges: mergesTxt });      // GPT-2's BPE (bpe.js)
//   const bert = await loadTokenizer({ vocabTxt, lowercase: false });                  // BERT's WordPiece (wordpiece.js)
//   tok.kind;                                  // 'tokenizer.json', 'bpe' or 'wordpiece'
//   tok.encode('我看见那只猫在吃鱼');             // ids, with the special tokens the tokenizer adds
//   tok.encode(text, { specialTokens: false }); // without them
//   tok.decode(ids); tok.tokens(ids); tok.vocabSize;
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
//   White_Space), which is what HF's Rust tokenizers and GPT-2 use.
import { AttentionError, ErrorCode, asError, describe, quote } from '../core/errors.js';
import { tokenIds } from './token-ids.js';
import { readJson } from './text-files.js';
import { createTokenizer } from './tokenizer.js';
import { byteTokens } from './bpe.js';

const bad = (message) => new AttentionError(ErrorCode.INVALID_MODEL, `tokenizer.json: ${message}`);
const badArg = (message) => new AttentionError(ErrorCode.INVALID_ARGUMENT, message);

const FILES = ['tokenizer', 'tokenizerConfig', 'vocab', 'merges', 'vocabTxt', 'lowercase'];
const MODELS = ['BPE', 'WordPiece', 'Unigram'];
const MAX_ID = 2 ** 24;   // ids below 16,777,216 (the largest vocabularies have about 260,000)

/** GPT-2's pre-tokenizer as a Split (Oniguruma: \s is Unicode White_Space), as HF's ByteLevel uses it. */
const GPT2_SPLIT = {
  type: 'Split',
  pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+" },
  behavior: 'Isolated',
  invert: false,
};

let library = null;   // the module @huggingface/tokenizers, once imported

/**
 * loadTokenizer(files): files is { tokenizer, tokenizerConfig? } (tokenizer.json and
 * tokenizer_config.json), { vocab, merges } (vocab.json and merges.txt) or { vocabTxt,
 * lowercase? } (vocab.txt; tokenizerConfig's do_lower_case when lowercase is not given), each
 * file's text or parsed value. Resolves to { kind, encode, decode, tokens, vocabSize }; rejects
 * with an AttentionError.
 */
export async function loadTokenizer(files) {
  let f;
  try {
    f = readFiles(files);
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
  if (f.tokenizer === undefined && f.vocab === undefined && f.merges === undefined && f.vocabTxt === undefined) {
    throw badArg('loadTokenizer: no tokenizer files: give tokenizer (tokenizer.json), vocab and merges (vocab.json, merges.txt) or vocabTxt (vocab.txt)');
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

/** The tokenizer of a tokenizer.json (text or parsed) and tokenizer_config.json (optional), with the library's Tokenizer class. */
function fromTokenizerJson(Tokenizer, tokenizerJson, tokenizerConfig) {
  const json = readJson(tokenizerJson, 'tokenizer.json');
  if (json === null || typeof json !== 'object' || Array.isArray(json) || json.model === null || typeof json.model !== 'object') {
    throw bad(`expected an object with a "model" (the vocabulary and its algorithm); received ${describe(json)}`);
  }
  const config = tokenizerConfig === undefined ? {} : readJson(tokenizerConfig, 'tokenizer_config.json');
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new AttentionError(ErrorCode.INVALID_MODEL, `tokenizer_config.json must be an object; received ${describe(config)}`);
  }
  const { byId, added } = readVocabulary(json);
  checkPatterns(json);
  let lib;
  try {
    lib = new Tokenizer({
      normalizer: null, post_processor: null, decoder: null,
      ...json,
      added_tokens: json.added_tokens ?? [],
      pre_tokenizer: whiteSpaceSplit(json.pre_tokenizer ?? null),
    }, config);
  } catch (e) {
    throw bad(`the library cannot read it: ${String(e?.message).slice(0, 200)}`);
  }
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
      const { ids, tokens } = run('encode', () => lib.encode(text, { add_special_tokens: specialTokens }));
      ids.forEach((id, i) => {
        if (!Number.isInteger(id) || byId[id] === undefined) throw bad(`encoding gave the token ${quote(String(tokens[i]))}, which is not in the vocabulary (and there is no unk_token)`);
      });
      return ids;
    },
    /** A pair as the file's post-processor joins two texts (BERT: [CLS] a [SEP] b [SEP]), with its token types. */
    encodePair(a, b) {
      if (typeof a !== 'string' || typeof b !== 'string') throw badArg(`encode(a, b): both texts must be strings; received ${describe(typeof a !== 'string' ? a : b)}`);
      const { ids } = run('encode', () => lib.encode(a, { text_pair: b, add_special_tokens: true }));
      const bare = (t) => run('encode', () => lib.encode(t, { add_special_tokens: false }).ids);
      const pair = pairOf(json.post_processor, bare(a), bare(b));
      // the library gives no token types: they are read off the template, which must give its ids
      if (pair.ids.length !== ids.length || pair.ids.some((id, i) => id !== ids[i])) throw bad('its post_processor joins a pair in a way attnmap cannot give token types for');
      return pair;
    },
    /** The id of a token spelled so ('[MASK]', '<mask>'), or undefined. */
    idOf: (token) => (typeof token === 'string' ? lib.token_to_id(token) ?? undefined : undefined),
    decode(ids) {
      const list = chosen(ids, 'decode(ids): ids');
      if (list.length === 0) return '';
      return run('decode', () => lib.decode(Array.from(list), { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
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
function run(what, fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AttentionError) throw e;
    throw bad(`${what} failed in the library: ${String(e?.message).slice(0, 200)}`);
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
// added_tokens -> tokens by id (an added token takes its id's place, as in the library), and the
// ids of the added tokens
function readVocabulary(json) {
  const { model } = json;
  if (!MODELS.includes(model.type)) {
    throw bad(model.type === undefined ? `the model has no "type" (${MODELS.join(', ')} are read)` : `the model type ${quote(String(model.type), 40)} is not supported (${MODELS.join(', ')} are)`);
  }
  const byId = [];
  const put = (token, id, where) => {
    if (typeof token !== 'string') throw bad(`${where}: the token is ${describe(token)}, not a string`);
    if (!Number.isInteger(id) || id < 0 || id >= MAX_ID) throw bad(`${where} ${quote(token)}: id ${typeof id === 'string' ? quote(id) : describe(id)} is not an integer in 0..${MAX_ID - 1}`);
    byId[id] = token;
  };
  if (model.type === 'Unigram') {
    if (!Array.isArray(model.vocab)) throw bad(`model.vocab must be a list of [piece, score]; received ${describe(model.vocab)}`);
    model.vocab.forEach((entry, i) => put(Array.isArray(entry) ? entry[0] : entry, i, `model.vocab[${i}]`));
  } else {
    if (model.vocab === null || typeof model.vocab !== 'object' || Array.isArray(model.vocab)) {
      throw bad(`model.vocab must be an object of token -> id; received ${describe(model.vocab)}`);
    }
    for (const [token, id] of Object.entries(model.vocab)) put(token, id, 'model.vocab entry');
  }
  const addedTokens = json.added_tokens ?? [];
  if (!Array.isArray(addedTokens)) throw bad(`added_tokens must be a list; received ${describe(addedTokens)}`);
  const added = new Set();
  addedTokens.forEach((t, i) => {
    if (t === null || typeof t !== 'object') throw bad(`added_tokens[${i}] must be an object { id, content }; received ${describe(t)}`);
    put(t.content, t.id, `added_tokens[${i}]`);
    added.add(t.id);
  });
  if (byId.length === 0) throw bad('the vocabulary is empty');
  if (model.type === 'BPE') checkMerges(model);
  return { byId, added };
}

// BPE merges: "left right" or [left, right]; both tokens and their merge in model.vocab (HF's
// Rust tokenizers refuses the file otherwise; the library would drop what it cannot spell).
// About 0.2 s for Llama 3's 280,147 merges.
function checkMerges({ merges, vocab, continuing_subword_prefix: prefix }) {
  if (!Array.isArray(merges)) throw bad(`model.merges must be a list of merges; received ${describe(merges)}`);
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

// every { pattern } of the normalizer, pre-tokenizer, post-processor and decoder is { Regex } or
// { String } (the library would drop the whole text, with a console warning, for anything else)
function checkPatterns(json) {
  const visit = (node, where) => {
    if (Array.isArray(node)) { node.forEach((x, i) => visit(x, `${where}[${i}]`)); return; }
    if (node === null || typeof node !== 'object') return;
    if ('pattern' in node) {
      const p = node.pattern;
      if (p === null || typeof p !== 'object' || (typeof p.Regex !== 'string' && typeof p.String !== 'string')) {
        throw bad(`${where}.pattern must be { "Regex": … } or { "String": … }; received ${describe(p)}`);
      }
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'pattern') visit(value, `${where}.${key}`);
  };
  for (const part of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder']) visit(json[part], part);
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

// does the component (or a Sequence in it) have this type?
function hasType(node, type) {
  if (node === null || typeof node !== 'object') return false;
  if (node.type === type) return true;
  return Object.values(node).some((v) => Array.isArray(v) && v.some((x) => hasType(x, type)));
}
