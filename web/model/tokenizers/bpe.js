// bpe.js - GPT-2's byte-level BPE tokenizer, from the checkpoint's vocab.json and merges.txt.
//
//   import { createBpe } from './bpe.js';
//   const bpe = createBpe(vocabJsonText, mergesTxt);
//   bpe.encode('Hello world');        // [15496, 995]
//   bpe.decode([15496, 995]);         // 'Hello world'
//   bpe.tokens([15496, 995]);         // ['Hello', '▁world']  (labels for a heatmap)
//
// The algorithm is GPT-2's (openai/gpt-2 encoder.py), checked id for id against the r50k_base
// encoding of js-tiktoken by tests/unit/tokenizer.test.js:
//
// 1. Pre-tokenise with GPT-2's pattern
//      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//    where \s is Unicode White_Space, as in tiktoken's Rust regex and HF tokenizers' Oniguruma.
//    (JavaScript's \s differs in two characters: it has U+FEFF and lacks U+0085.)
// 2. Each piece becomes its UTF-8 bytes, each byte one symbol (a token of vocab.json, spelt with
//    GPT-2's byte-to-unicode table: printable Latin-1 bytes as themselves, the others as U+0100…).
// 3. Repeatedly merge the adjacent pair with the lowest rank in merges.txt (line order), leftmost
//    first among equals, until no pair has a rank. The result's tokens are the piece's ids.
//
// Everything is text: '<|endoftext|>' inside the input is encoded as the 13 characters it is
// (encoder.py does the same; tiktoken refuses it). A lone UTF-16 surrogate cannot be UTF-8 and is
// encoded as U+FFFD, so decode(encode(t)) === t for every well-formed string t.
//
// Token labels (tokens(ids)): a token's bytes shown as the text they decode to, with
//   '▁' for each space (so a leading space, and runs of spaces, are visible), '↵' for \n,
//   '⇥' for \t, '␍' for \r, and '<0xE7>' (SentencePiece's byte-fallback spelling) for each byte
//   that is not part of a complete UTF-8 character inside the token, e.g. the halves of 猫.
// A token that is not byte-level (an added token with characters outside the table) is its own text.

import { AttentionError, ErrorCode, describe, quote } from '../../core/errors.js';
import { tokenIds } from './token-ids.js';
import { readJson, stripBom } from '../load/text-files.js';

const bad = (message) => new AttentionError(ErrorCode.INVALID_MODEL, message);
const badArg = (message) => new AttentionError(ErrorCode.INVALID_ARGUMENT, message);

// Unicode White_Space, spelt out because JavaScript's \s is a different set
const WS = '\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const PATTERN = `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`;

const CACHE_SIZE = 20000;      // pieces remembered (first in, first out)
const CACHE_MAX_PIECE = 64;    // longer pieces are rare and not worth keeping

/** GPT-2's bytes_to_unicode: byte b -> the character that spells it in vocab.json and merges.txt. */
export function byteToUnicode() {
  const table = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : next++);
  }
  return table;
}

// vocab.json -> tokens by id; ids must be 0..n-1, each once
function readVocab(vocabJson) {
  const vocab = readJson(vocabJson, 'vocab.json');
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw bad(`vocab.json must be an object of token -> integer id; received ${describe(vocab)}`);
  }
  const entries = Object.entries(vocab);
  if (entries.length === 0) throw bad('vocab.json has no tokens');
  const byId = new Array(entries.length);
  for (const [token, id] of entries) {
    if (!Number.isInteger(id) || id < 0 || id >= entries.length) {
      throw bad(`vocab.json entry ${quote(token)}: id ${typeof id === 'number' ? id : typeof id === 'string' ? quote(id) : describe(id)} is not an integer in 0..${entries.length - 1} (ids must number the ${entries.length} tokens)`);
    }
    if (byId[id] !== undefined) throw bad(`vocab.json entries ${quote(byId[id])} and ${quote(token)} have the same id ${id}`);
    byId[id] = token;
  }
  return byId;
}

// merges.txt -> Map(left id * n + right id -> rank), and the merged token's id by rank
function readMerges(mergesTxt, ids, n) {
  if (typeof mergesTxt !== 'string') throw bad(`merges.txt must be text; received ${describe(mergesTxt)}`);
  const lines = stripBom(mergesTxt).split('\n');
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  const ranks = new Map();
  const merged = [];
  const idOf = (token, line) => {
    const id = ids.get(token);
    if (id === undefined) throw bad(`merges.txt line ${line}: token ${quote(token)} is not in vocab.json`);
    return id;
  };
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    if (i === 0 && text.startsWith('#version')) continue;
    const parts = text.split(' ');
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
      throw bad(`merges.txt line ${i + 1}: ${quote(text)} is not two tokens separated by one space`);
    }
    const key = idOf(parts[0], i + 1) * n + idOf(parts[1], i + 1);
    if (ranks.has(key)) throw bad(`merges.txt line ${i + 1}: the merge ${quote(text)} is a repeat of an earlier line`);
    ranks.set(key, merged.length);
    merged.push(idOf(parts[0] + parts[1], i + 1));
  }
  return { ranks, merged };
}

// a binary min-heap of numbers (rank * 2**32 + position: lowest rank, then leftmost)
function heapPush(h, x) {
  let i = h.length;
  h.push(x);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p] <= x) break;
    h[i] = h[p]; i = p;
  }
  h[i] = x;
}
function heapPop(h) {
  const top = h[0], x = h.pop();
  if (h.length > 0) {
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= h.length) break;
      if (c + 1 < h.length && h[c + 1] < h[c]) c++;
      if (h[c] >= x) break;
      h[i] = h[c]; i = c;
    }
    h[i] = x;
  }
  return top;
}

/**
 * Merge the symbols of one piece (ids, changed in place) by rank; returns the resulting ids.
 * Symbols form a linked list; a heap holds every adjacent pair that has a rank, and a popped
 * pair is used only if both its symbols are still what they were. O(k log k) for k bytes.
 */
function mergePiece(sym, ranks, merged, n) {
  const k = sym.length;
  if (k < 2) return sym;
  const next = new Int32Array(k), prev = new Int32Array(k);
  for (let i = 0; i < k; i++) { next[i] = i + 1; prev[i] = i - 1; }
  next[k - 1] = -1;
  const heap = [];
  const consider = (i) => {
    const j = next[i];
    if (j < 0) return;
    const r = ranks.get(sym[i] * n + sym[j]);
    if (r !== undefined) heapPush(heap, r * 4294967296 + i);
  };
  for (let i = 0; i < k - 1; i++) consider(i);
  while (heap.length > 0) {
    const top = heapPop(heap);
    const rank = Math.floor(top / 4294967296), i = top - rank * 4294967296;
    const j = next[i];
    if (sym[i] < 0 || j < 0 || ranks.get(sym[i] * n + sym[j]) !== rank) continue;   // stale
    sym[i] = merged[rank];
    sym[j] = -1;
    next[i] = next[j];
    if (next[j] >= 0) prev[next[j]] = i;
    if (prev[i] >= 0) consider(prev[i]);
    consider(i);
  }
  const out = [];
  for (let i = 0; i >= 0; i = next[i]) out.push(sym[i]);
  return out;
}

/** A byte-level token's bytes, as a label: see the header for the marks. */
export function byteLabel(bytes) {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let s = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let ch = null;
    if (len > 0 && i + len <= bytes.length) {
      try { ch = decoder.decode(bytes.subarray(i, i + len)); } catch { ch = null; }
    }
    if (ch === null) {
      s += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
      i += 1;
    } else {
      s += ch === ' ' ? '▁' : ch === '\n' ? '↵' : ch === '\t' ? '⇥' : ch === '\r' ? '␍' : ch;
      i += len;
    }
  }
  return s;
}

/**
 * A vocabulary's tokens as bytes and labels, each made on first use: bytesOf(id), the bytes the
 * token spells with GPT-2's table (a character outside the table, as in an added token, as its
 * own UTF-8), and labelOf(id), byteLabel of those bytes, or the token's own text when it has a
 * character outside the table. byId[id] is the token. (tokenizer.json's byte-level BPE too.)
 */
export function byteTokens(byId) {
  const fromChar = new Map(byteToUnicode().map((c, b) => [c, b]));
  const encoder = new TextEncoder();
  const bytes = new Map();
  const bytesOf = (id) => {
    let out = bytes.get(id);
    if (out === undefined) {
      const list = [];
      for (const c of byId[id]) {
        const b = fromChar.get(c);
        if (b !== undefined) list.push(b); else list.push(...encoder.encode(c));
      }
      out = Uint8Array.from(list);
      bytes.set(id, out);
    }
    return out;
  };
  const labelOf = (id) => {
    for (const c of byId[id]) if (!fromChar.has(c)) return byId[id];
    return byteLabel(bytesOf(id));
  };
  return { bytesOf, labelOf };
}

/**
 * createBpe(vocabJson, mergesTxt): vocabJson is vocab.json's text or the parsed object (token ->
 * id); mergesTxt is merges.txt's text, an optional '#version' first line, then one merge per line
 * ("left right"), highest priority first. Throws INVALID_MODEL, naming the file and the entry or
 * line, when a file is broken.
 */
export function createBpe(vocabJson, mergesTxt) {
  const byId = readVocab(vocabJson);
  const n = byId.length;
  const ids = new Map(byId.map((t, i) => [t, i]));
  const { ranks, merged } = readMerges(mergesTxt, ids, n);

  const byteIds = byteToUnicode().map((c, b) => {
    const id = ids.get(c);
    if (id === undefined) throw bad(`vocab.json has no token for byte 0x${b.toString(16).padStart(2, '0')} (spelt ${quote(c)}): a byte-level vocabulary needs all 256`);
    return id;
  });
  const { bytesOf, labelOf } = byteTokens(byId);

  const utf8 = new TextEncoder();
  const cache = new Map();
  const encodePiece = (piece) => {
    let out = cache.get(piece);
    if (out !== undefined) return out;
    const bytes = utf8.encode(piece);
    const sym = new Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) sym[i] = byteIds[bytes[i]];
    out = mergePiece(sym, ranks, merged, n);
    if (piece.length <= CACHE_MAX_PIECE) {
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value);
      cache.set(piece, out);
    }
    return out;
  };

  return {
    vocabSize: n,
    encode(text) {
      if (typeof text !== 'string') throw badArg(`encode(text): text must be a string; received ${describe(text)}`);
      const out = [];
      for (const m of text.matchAll(new RegExp(PATTERN, 'gu'))) {
        for (const id of encodePiece(m[0])) out.push(id);
      }
      return out;
    },
    decode(ids) {
      const list = tokenIds(ids, 'decode(ids): ids', n);   // read once: a Proxy cannot change them
      let total = 0;
      for (const id of list) total += bytesOf(id).length;
      const all = new Uint8Array(total);
      let at = 0;
      for (const id of list) { all.set(bytesOf(id), at); at += bytesOf(id).length; }
      return new TextDecoder('utf-8', { ignoreBOM: true }).decode(all);   // invalid UTF-8 (a cut sequence) becomes U+FFFD
    },
    tokens(ids) {
      return Array.from(tokenIds(ids, 'tokens(ids): ids', n), labelOf);
    },
  };
}
