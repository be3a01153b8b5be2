// sample.js - the next token from a row of logits: greedy (temperature 0), or drawn from
// softmax(logits / temperature) over the topK most likely tokens with a seeded generator, so
// that one seed always gives the same text.
import { ErrorCode, fail, describe } from '../core/errors.js';

const OPTIONS = ['maxTokens', 'temperature', 'topK', 'seed', 'attention', 'stop'];

// SplitMix32: a small seeded generator of uniform numbers in [0, 1) (32 bits each)
function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

/**
 * generate()'s options, checked: { maxTokens = 20, temperature = 0, topK = 0 (all), seed = 0,
 * attention = false, stop }. stop: the ids that end the generation (yielded, then done); by
 * default the config's eos_token_id (one id or a list; done: 'eos'), a list of ids of one's
 * own (done: 'stop'), or false for none.
 */
export function readSampling(options, config) {
  if (options === null || typeof options !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `model.generate: options must be an object like { maxTokens: 20 }; received ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `model.generate: unknown option "${key}"; expected one of ${OPTIONS.join(', ')}`);
  }
  const { maxTokens = 20, temperature = 0, topK = 0, seed = 0, attention = false, stop } = options;
  const bad = (what, v) => fail(ErrorCode.INVALID_ARGUMENT, `model.generate: ${what}; received ${describe(v)}`);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) bad('maxTokens must be a positive integer', maxTokens);
  if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature)) bad('temperature must be a finite number >= 0 (0: greedy)', temperature);
  if (!Number.isInteger(topK) || topK < 0 || topK > config.vocab_size) bad(`topK must be an integer from 0 (all tokens) to vocab_size = ${config.vocab_size}`, topK);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) bad('seed must be an integer from 0 to 2^32 - 1', seed);
  if (typeof attention !== 'boolean') bad('attention must be true or false', attention);
  if (stop !== undefined && stop !== false && !(Array.isArray(stop) && stop.length <= MAX_STOP && stop.every((id) => Number.isInteger(id)))) {
    bad(`stop must be an array of at most ${MAX_STOP} token ids, or false for none`, stop);
  }
  const eos = eosIds(config);
  return {
    maxTokens, temperature, topK, attention, random: splitmix32(seed),
    stop: stop === undefined ? eos : stop === false ? [] : [...stop], stopWhy: stop === undefined ? 'eos' : 'stop',
  };
}

const MAX_STOP = 1024;

/** config.json's eos_token_id: one id or a list, [] when absent or not ids. */
export function eosIds(config) {
  const e = config.raw?.eos_token_id;
  const list = Array.isArray(e) ? e : [e];
  return list.filter((id) => Number.isInteger(id) && id >= 0 && id < config.vocab_size).slice(0, MAX_STOP);
}

/** The id of the largest logit (the lowest id on a tie). */
export function argmax(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/**
 * The ids of the k largest logits, largest first, the lower id first among equals: the first k
 * of a full sort, found in O(n log k) with a heap of the k best so far (the worst of them at its
 * root). Each logit is read once; NaN ranks as -Infinity.
 */
export function topK(logits, k) {
  const n = logits.length;
  k = Math.min(k, n);
  if (k <= 0) return [];
  const value = new Float64Array(k), id = new Int32Array(k);
  // heap order: a is worse than b (a smaller logit, or an equal one with a larger id)
  const worse = (a, b) => value[a] < value[b] || (value[a] === value[b] && id[a] > id[b]);
  const swap = (a, b) => {
    const v = value[a]; value[a] = value[b]; value[b] = v;
    const i = id[a]; id[a] = id[b]; id[b] = i;
  };
  const siftDown = (at, size) => {
    for (;;) {
      let c = 2 * at + 1;
      if (c >= size) return;
      if (c + 1 < size && worse(c + 1, c)) c++;
      if (!worse(c, at)) return;
      swap(c, at);
      at = c;
    }
  };
  for (let i = 0; i < n; i++) {
    let x = logits[i];
    if (Number.isNaN(x)) x = -Infinity;
    if (i < k) {
      value[i] = x; id[i] = i;
      if (i === k - 1) for (let at = (k >> 1) - 1; at >= 0; at--) siftDown(at, k);
    } else if (x > value[0]) {   // an equal logit has a larger id than every kept one: worse
      value[0] = x; id[0] = i;
      siftDown(0, k);
    }
  }
  const out = new Array(k);
  for (let size = k; size > 0; size--) {   // the worst first, to the end
    out[size - 1] = id[0];
    swap(0, size - 1);
    siftDown(0, size - 1);
  }
  return out;
}

/** The next token: argmax at temperature 0, else a draw from softmax(logits / temperature) over the top k. */
export function pickToken(logits, { temperature, topK: k, random }) {
  if (temperature === 0) return argmax(logits);
  const ids = k > 0 && k < logits.length ? topK(logits, k) : Array.from(logits.keys());
  let max = -Infinity;
  for (const i of ids) if (logits[i] > max) max = logits[i];
  const weights = ids.map((i) => Math.exp((logits[i] - max) / temperature));
  let total = 0;
  for (const w of weights) total += w;
  let u = random() * total;
  for (let j = 0; j < ids.length; j++) {
    u -= weights[j];
    if (u < 0) return ids[j];
  }
  return ids[ids.length - 1];
}
