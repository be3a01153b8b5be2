// tokenizer.js - the checkpoint's tokenizer, chosen by the files it has.
//
//   import { createTokenizer } from './tokenizer.js';
//   const tok = createTokenizer({ vocab: vocabJsonText, merges: mergesTxt });   // GPT-2: BPE
//   const tok = createTokenizer({ vocabTxt, lowercase: false });               // BERT: WordPiece
//   tok.kind;                 // 'bpe' or 'wordpiece'
//   tok.encode(text); tok.decode(ids); tok.tokens(ids); tok.vocabSize;
//
// vocab (vocab.json: its text or the parsed object) and merges (merges.txt's text) make a
// byte-level BPE tokenizer (bpe.js); vocabTxt (vocab.txt's text) a WordPiece one (wordpiece.js),
// lower-casing unless lowercase is false (a cased checkpoint). No files at all: null.
// One of vocab.json and merges.txt without the other is a broken checkpoint (INVALID_MODEL);
// both kinds at once is ambiguous (INVALID_ARGUMENT).
// tokenizer.json (Qwen3, Llama 3, …) is read by load-tokenizer.js: loadTokenizer(files) takes it
// and these files, and is async (it imports @huggingface/tokenizers on first use). Given
// tokenizer.json here, createTokenizer refuses (INVALID_ARGUMENT) rather than read the other files.

import { AttentionError, ErrorCode, describe } from '../../core/errors.js';
import { createBpe } from './bpe.js';
import { createWordPiece } from './wordpiece.js';

export function createTokenizer(files = {}) {
  if (files === null || typeof files !== 'object') {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `createTokenizer: expected an object { vocab, merges } or { vocabTxt }; received ${describe(files)}`);
  }
  const { vocab, merges, vocabTxt, lowercase, tokenizer } = files;
  const has = (x) => x !== undefined && x !== null;
  if (has(tokenizer)) {
    // never vocab.json + merges.txt in its place: Qwen's folders have both, and GPT-2's pattern is not Qwen's
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT, 'createTokenizer: tokenizer.json is read by loadTokenizer (load-tokenizer.js), which imports @huggingface/tokenizers and so is async: await loadTokenizer({ tokenizer, tokenizerConfig })');
  }
  const bpe = has(vocab) || has(merges);
  if (bpe && has(vocabTxt)) {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT, 'createTokenizer: give vocab.json and merges.txt (BPE) or vocab.txt (WordPiece), not both');
  }
  if (bpe) {
    if (!has(vocab) || !has(merges)) {
      throw new AttentionError(ErrorCode.INVALID_MODEL, `a BPE tokenizer needs both vocab.json and merges.txt; ${has(vocab) ? 'merges.txt' : 'vocab.json'} is missing`);
    }
    return { kind: 'bpe', ...createBpe(vocab, merges) };
  }
  if (has(vocabTxt)) {
    return { kind: 'wordpiece', ...createWordPiece(vocabTxt, lowercase === undefined ? {} : { lowercase }) };
  }
  return null;
}
