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

/** The next token: argmax at temperature 0, else a draw from softmax(logits / temperature) over the top k. */
export function pickToken(logits, { temperature, topK, random }) {
  if (temperature === 0) return argmax(logits);
  let ids = Array.from(logits.keys());
  if (topK > 0 && topK < ids.length) ids = ids.sort((a, b) => logits[b] - logits[a] || a - b).slice(0, topK);
  let max = -Infinity;
  for (const i of ids) if (logits[i] > max) max = logits[i];
  const weights = ids.map((i) => Math.exp((logits[i] - max) / temperature));
  let total = 0;
  for (const w of weights) total += w;
  let u = random() * total;
  for (let k = 0; k < ids.length; k++) {
    u -= weights[k];
    if (u < 0) return ids[k];
  }
  return ids[ids.length - 1];
}
