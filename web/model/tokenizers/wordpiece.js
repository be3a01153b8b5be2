// wordpiece.js - BERT's tokenizer, from the checkpoint's vocab.txt (one token per line, id = line
// number from 0).
//
//   import { createWordPiece } from './wordpiece.js';
//   const wp = createWordPiece(vocabTxt, { lowercase: true });
//   wp.encode('Unaffable!');                    // ids of un ##aff ##able !
//   wp.encode('Unaffable!', { specialTokens: true }); // the same between [CLS] and [SEP] ({ special: true } too)
//   wp.decode(ids);                             // 'unaffable !'
//   wp.tokens(ids);                             // ['un', '##aff', '##able', '!']
//
// The algorithm is BasicTokenizer then WordpieceTokenizer of transformers' tokenization_bert.py:
//
// 1. Clean: drop U+0000, U+FFFD and control characters (category C*, except \t \n \r), turn
//    \t \n \r and space separators (Zs) into ' '.
// 2. Put spaces around CJK ideographs (BERT's ranges, below), so each is a word of its own.
// 3. NFC, then split on whitespace into words.
// 4. When lowercasing: lower-case, and strip accents (NFD, drop Mn) unless stripAccents is false;
//    without lowercasing, strip accents only if stripAccents is true.
// 5. Split each word at punctuation: ASCII 33-47, 58-64, 91-96, 123-126 and Unicode P*; each
//    punctuation character is a word of its own.
// 6. WordPiece: a word longer than maxCharsPerWord code points is unk; otherwise take the
//    longest prefix in the vocabulary, then the longest '##'-prefixed continuation, and so on;
//    if some remainder has no match, the whole word is unk (no backtracking).
//
// encode adds no [CLS]/[SEP] unless asked ({ specialTokens: true }, or { special: true }).
// Special tokens written in the text ('猫吃[MASK]') are special tokens, as in HF's BertTokenizer,
// which never splits them: [PAD], [UNK], [CLS], [SEP] and [MASK], those vocab.txt has.
// encodePair(a, b) gives [CLS] a [SEP] b [SEP] with its token types; idOf(token) an id.
// decode joins the tokens with spaces and glues '##' continuations to what precedes them, as HF's
// convert_tokens_to_string does (without clean_up_tokenization_spaces): 'hello , world'. Unlike
// HF's BertTokenizer.decode, which writes '我 看 见 猫 and 狗', no space goes between two CJK
// characters (BERT's ideographs, CJK punctuation, kana, full-width forms), so the text reads as
// written and as the streamed pieces show it: '我看见猫 and 狗' (a space where one side is not CJK).

import { AttentionError, ErrorCode, describe, quote } from '../../core/errors.js';
import { stripBom } from '../load/text-files.js';
import { tokenIds } from './token-ids.js';

const bad = (message) => new AttentionError(ErrorCode.INVALID_MODEL, message);
const badArg = (message) => new AttentionError(ErrorCode.INVALID_ARGUMENT, message);

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

const CJK = [
  [0x4e00, 0x9fff], [0x3400, 0x4dbf], [0x20000, 0x2a6df], [0x2a700, 0x2b73f],
  [0x2b740, 0x2b81f], [0x2b820, 0x2ceaf], [0xf900, 0xfaff], [0x2f800, 0x2fa1f],
];
const isCjk = (cp) => CJK.some(([lo, hi]) => cp >= lo && cp <= hi);
// decode: characters written without spaces between them (CJK symbols and punctuation U+3000-303F,
// hiragana and katakana U+3040-30FF, full-width forms U+FF00-FFEF, and BERT's ideographs)
const isWide = (cp) => (cp >= 0x3000 && cp <= 0x30ff) || (cp >= 0xff00 && cp <= 0xffef) || isCjk(cp);
const lastCodePoint = (s) => {
  const low = s.charCodeAt(s.length - 1);
  return low >= 0xdc00 && low <= 0xdfff && s.length > 1 ? s.codePointAt(s.length - 2) : low;
};

const isControl = (ch) => ch !== '\t' && ch !== '\n' && ch !== '\r' && /^\p{C}$/u.test(ch);
const isWhitespace = (ch) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || /^\p{Zs}$/u.test(ch);
const isPunctuation = (ch) => {
  const cp = ch.codePointAt(0);
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) || /^\p{P}$/u.test(ch);
};
// Python's str.split(): what str.isspace() calls space (after cleaning only ' ', U+2028, U+2029 remain)
// (the control characters U+001C-U+001F are among them: Python calls them space)
// eslint-disable-next-line no-control-regex
const SPLIT = /[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;
const words = (text) => text.split(SPLIT).filter((w) => w !== '');

// steps 1 and 2
function clean(text) {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
    if (isWhitespace(ch)) out += ' ';
    else if (isCjk(cp)) out += ` ${ch} `;
    else out += ch;
  }
  return out;
}

const stripAccentsOf = (word) => word.normalize('NFD').replace(/\p{Mn}/gu, '');

// step 5
function splitPunctuation(word) {
  const out = [];
  let current = '';
  for (const ch of word) {
    if (isPunctuation(ch)) {
      if (current !== '') out.push(current);
      out.push(ch);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current !== '') out.push(current);
  return out;
}

// vocab.txt -> tokens by id
function readVocabTxt(vocabTxt) {
  if (typeof vocabTxt !== 'string') throw bad(`vocab.txt must be text; received ${describe(vocabTxt)}`);
  const lines = stripBom(vocabTxt).split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw bad('vocab.txt is empty: it needs one token per line');
  const seen = new Map();
  lines.forEach((token, i) => {
    if (token === '') throw bad(`vocab.txt line ${i + 1} is empty (a token per line, ids by line number)`);
    if (seen.has(token)) throw bad(`vocab.txt line ${i + 1} repeats line ${seen.get(token) + 1} (${quote(token)})`);
    seen.set(token, i);
  });
  return { byId: lines, ids: seen };
}

// the most code points a match can have (bounded by UTF-16 units, never fewer): head, a word's
// first piece (any token); tail, a continuation ('##' and at most tail code points)
function longestTokens(byId) {
  let head = 0, tail = 0;
  for (const token of byId) {
    head = Math.max(head, token.length);
    if (token.startsWith('##')) tail = Math.max(tail, token.length - 2);
  }
  return { head, tail };
}

function checkOptions({ lowercase = true, stripAccents, unk = '[UNK]', maxCharsPerWord = 100 }) {
  if (typeof lowercase !== 'boolean') throw badArg(`createWordPiece: lowercase must be true or false; received ${describe(lowercase)}`);
  if (stripAccents !== undefined && typeof stripAccents !== 'boolean') throw badArg(`createWordPiece: stripAccents must be true, false or undefined; received ${describe(stripAccents)}`);
  if (typeof unk !== 'string' || unk === '') throw badArg(`createWordPiece: unk must be a non-empty string; received ${describe(unk)}`);
  if (!Number.isInteger(maxCharsPerWord) || maxCharsPerWord < 1) throw badArg(`createWordPiece: maxCharsPerWord must be a positive integer; received ${describe(maxCharsPerWord)}`);
  return { lowercase, stripAccents: stripAccents ?? lowercase, unk, maxCharsPerWord };
}

/**
 * createWordPiece(vocabTxt, options): vocabTxt is vocab.txt's text. Options: lowercase (true),
 * stripAccents (follows lowercase), unk ('[UNK]'), maxCharsPerWord (100). Throws INVALID_MODEL
 * naming the line when vocab.txt is broken or lacks the unk token, INVALID_ARGUMENT for a bad option.
 */
export function createWordPiece(vocabTxt, options = {}) {
  if (options === null || typeof options !== 'object') throw badArg(`createWordPiece: options must be an object; received ${describe(options)}`);
  const o = checkOptions(options);
  const { byId, ids } = readVocabTxt(vocabTxt);
  const unkId = ids.get(o.unk);
  if (unkId === undefined) throw bad(`vocab.txt has no line ${quote(o.unk)} (the unknown token)`);

  // step 6, for one word: the longest match first, never longer than the longest token
  const longest = longestTokens(byId);
  const wordPiece = (word, out) => {
    const at = [0];                                  // code point i starts at word[at[i]]
    for (const ch of word) at.push(at[at.length - 1] + ch.length);
    const count = at.length - 1;
    if (count > o.maxCharsPerWord) { out.push(unkId); return; }
    const pieces = [];
    for (let start = 0; start < count;) {
      let end = Math.min(count, start + (start > 0 ? longest.tail : longest.head)), id;
      for (; end > start; end--) {
        id = ids.get((start > 0 ? '##' : '') + word.slice(at[start], at[end]));
        if (id !== undefined) break;
      }
      if (end === start) { out.push(unkId); return; }
      pieces.push(id);
      start = end;
    }
    out.push(...pieces);
  };

  // the text between the special tokens written in it, each piece through steps 1-6
  const specials = SPECIAL_TOKENS.filter((t) => ids.has(t));
  const encodeText = (text, out) => {
    for (const piece of specials.length ? text.split(new RegExp(`(${specials.map((t) => t.replace(/[[\]]/g, '\\$&')).join('|')})`)) : [text]) {
      if (specials.includes(piece)) { out.push(ids.get(piece)); continue; }
      for (let word of words(clean(piece).normalize('NFC'))) {
        if (o.lowercase) word = word.toLowerCase();
        if (o.stripAccents) word = stripAccentsOf(word);
        for (const w of splitPunctuation(word)) wordPiece(w, out);
      }
    }
  };

  const specialId = (token) => {
    const id = ids.get(token);
    if (id === undefined) throw bad(`vocab.txt has no line ${token}, needed by encode(text, { specialTokens: true })`);
    return id;
  };

  return {
    vocabSize: byId.length,
    encode(text, { special = false, specialTokens = special } = {}) {
      if (typeof text !== 'string') throw badArg(`encode(text): text must be a string; received ${describe(text)}`);
      const out = specialTokens ? [specialId('[CLS]')] : [];
      encodeText(text, out);
      if (specialTokens) out.push(specialId('[SEP]'));
      return out;
    },
    /** [CLS] a [SEP] b [SEP] and the token types (0 up to the first [SEP], then 1), as BERT takes a pair. */
    encodePair(a, b) {
      if (typeof a !== 'string' || typeof b !== 'string') throw badArg(`encode(a, b): both texts must be strings; received ${describe(typeof a !== 'string' ? a : b)}`);
      const ids = [specialId('[CLS]')];
      encodeText(a, ids);
      ids.push(specialId('[SEP]'));
      const first = ids.length;
      encodeText(b, ids);
      ids.push(specialId('[SEP]'));
      return { ids, tokenTypes: ids.map((_, i) => (i < first ? 0 : 1)) };
    },
    /** The id of a token spelled so ('[MASK]'), or undefined. */
    idOf: (token) => ids.get(token),
    decode(list) {
      let out = '';
      for (const id of tokenIds(list, 'decode(ids): ids', byId.length)) {
        const token = byId[id];
        if (out === '') out = token;
        else if (token.startsWith('##')) out += token.slice(2);
        else out += (isWide(lastCodePoint(out)) && isWide(token.codePointAt(0)) ? '' : ' ') + token;
      }
      return out;
    },
    tokens(list) {
      return Array.from(tokenIds(list, 'tokens(ids): ids', byId.length), (id) => byId[id]);
    },
  };
}
