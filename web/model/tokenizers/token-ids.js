// token-ids.js - the ids that a tokenizer's decode(ids) and tokens(ids) take: read as idsArg reads
// a model's input (the length once and first, each element once, every failure
// INVALID_ARGUMENT), except that an empty list, which a model refuses, is taken (it decodes to '').
import { idsArg } from '../../core/args.js';

const NONE = new Int32Array(0);

/** ids (an array or a typed array) -> Int32Array of ids below vocab; name is the argument's, for messages. */
export function tokenIds(ids, name, vocab) {
  let empty = false;
  try { empty = (Array.isArray(ids) || ArrayBuffer.isView(ids)) && ids.length === 0; } catch { /* idsArg says why */ }
  return empty ? NONE : idsArg(ids, name, { vocab });
}
