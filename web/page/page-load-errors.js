// page-load-errors.js - why a model did not load or run, in the reader's words (issue 24 item 13).
// The loader (attnmap/model) fails with an AttentionError: a stable code and an English message
// that names the file, the tensor and the numbers. The page leads with a plain cause from
// T.models.ckpt.causes ("文件不完整（可能下载被截断）") and gives the loader's message after it,
// unchanged, in a <details>. This is the one table from an error to its message: the file picker
// (page-checkpoint.js) and the Hugging Face panel (page-hub.js) both read it.
//
// INVALID_MODEL covers every broken file, so its cause is read from the message: the rules below
// are tried in order and match words of web/model's messages (safetensors.js, checkpoint.js,
// weights.js, config.js and the tokenizers); tests/browser/page-trust2.test.js loads broken files
// in Node and checks that each gets its cause, so a reworded message shows up there. A message no
// rule knows gets 'unknown': the general sentence, with the detail.
//
// A .gguf file (issue 38) holds the config, the tensors and the tokenizer: its load tries
// GGUF_RULES first (the words of gguf.js, which name the file, gguf-config.js and
// gguf-tokenizer.js, which say "GGUF metadata:", and gguf-weights.js), then the rules below, whose
// causes that speak of config.json or safetensors become the GGUF file's (IN_GGUF).

/** [cause, test on the message], first match wins (INVALID_MODEL and NON_FINITE only). */
const INVALID_RULES = [
  ['notSafetensors', /not a safetensors file/],
  ['truncated', /data section has only|a safetensors file starts with an 8-byte header length/],
  ['nonFinite', /non-finite value|NaN or ±Infinity/],
  ['shards', /model\.safetensors\.index\.json|in two shards/],
  ['tokenizer', /vocab\.json|merges\.txt|vocab\.txt|tokenizer|added_tokens|model\.(?:vocab|merges)|the vocabulary|^the model (?:has no "type"|type)|^encoding gave|failed in the library|the library cannot read/],
  ['config', /^config\b|config\.json/],
  ['damaged', /the header|overlap|belong to no tensor|the tensors end at|data_offsets|whole number of bytes|more than 2\^53/],
  ['dtype', /has dtype/],
  ['mismatch', /^tensor |^unexpected tensor|^the tensor names|^the config says/],
];

/** A GGUF load's own rules, tried before INVALID_RULES. */
const GGUF_RULES = [
  ['notGguf', /\.gguf: (?:not a GGUF file|GGUF version)/i],
  ['truncated', /a truncated file|but the file has \d+ bytes|bytes are left in the file/],
  ['ggufTokenizer', /^GGUF metadata: tokenizer\.ggml\./],
  ['ggufMetadata', /^GGUF metadata: /],
  ['ggufUnsupported', /is not read\b|attnmap reads GGUF tensors|attnmap reads quantized matrices|file's tensors are read as|\.gguf: unexpected tensor/i],
  ['ggufDamaged', /\.gguf: /i],
];

/** INVALID_RULES' causes that name safetensors or config.json, for a GGUF file. */
const IN_GGUF = { notSafetensors: 'notGguf', damaged: 'ggufDamaged', config: 'ggufMetadata', tokenizer: 'ggufTokenizer', mismatch: 'ggufMismatch' };

/**
 * An error of a load or a forward pass -> { key, cause }: key names the sentence,
 * T.models.ckpt.errors[key](causeText); cause is a key of T.models.ckpt.causes (key 'invalid'
 * only), else null. gguf: the load of a .gguf file.
 */
export function loadError(e, { gguf = false } = {}) {
  if (e?.code === 'OUT_OF_MEMORY' || e instanceof RangeError) return { key: 'memory', cause: null };
  if (e?.code === 'TOO_LARGE') return { key: 'tooLarge', cause: null };
  if (e?.code === 'INVALID_MODEL' || (e?.code === 'NON_FINITE' && /non-finite value|NaN or ±Infinity/.test(e.message))) {
    const rule = [...(gguf ? GGUF_RULES : []), ...INVALID_RULES].find(([, test]) => test.test(String(e.message)));
    const cause = rule ? rule[0] : 'unknown';
    return { key: 'invalid', cause: (gguf && IN_GGUF[cause]) || cause };
  }
  if (e?.name === 'AttentionError') return { key: 'refused', cause: null };
  if (e?.name === 'NotReadableError' || e?.name === 'NotFoundError') return { key: 'readFailed', cause: null };
  return { key: 'other', cause: null };
}

/** The sentence of loadError's { key, cause } in C = T.models.ckpt. */
export const errorText = (C, { key, cause }) => C.errors[key](cause ? C.causes[cause] : '');

/**
 * The message's parts, for el.replaceChildren(...): the sentence, then the loader's words in a
 * closed <details>. put(el, fn) writes fn(T) into el, T the page's strings, now and again after a
 * language switch; lead(T, sentence) may wrap the sentence; options as loadError's.
 */
export function errorParts(h, put, e, lead = (T, said) => said, options = {}) {
  const which = loadError(e, options), detail = String(e?.message ?? e);
  const sentence = h('span', { class: 'error-lead' }), summary = h('summary', {});
  put(sentence, (T) => lead(T, errorText(T.models.ckpt, which)));
  put(summary, (T) => T.models.ckpt.detail);
  return [sentence, ' ', h('details', { class: 'error-detail' }, summary, h('code', {}, detail))];
}
