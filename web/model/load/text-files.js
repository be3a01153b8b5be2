// text-files.js - what every reader of a checkpoint's text files (vocab.json, merges.txt,
// vocab.txt, config.json, tokenizer.json) does to the text first.
import { AttentionError, ErrorCode } from '../../core/errors.js';

/** The text without one leading byte order mark (U+FEFF), as editors on Windows save it. */
export const stripBom = (text) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/**
 * A JSON file given as its text (parsed, without a leading BOM) or as the parsed value (taken as
 * it is). Text that is not JSON is INVALID_MODEL naming the file, with the parser's message cut
 * to 200 characters (a parser may quote the input).
 */
export function readJson(value, file) {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(stripBom(value));
  } catch (e) {
    throw new AttentionError(ErrorCode.INVALID_MODEL, `${file} is not JSON: ${String(e?.message).slice(0, 200)}`);
  }
}
