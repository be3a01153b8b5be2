// generate.js - model.generate: one token at a time with the KV cache, the prompt once and then
// each new token alone, until a stop id (by default the config's eos_token_id), maxTokens, or
// the end of the context window.
//
//   for await (const step of model.generate(ids, { maxTokens: 20 })) process.stdout.write(step.text);
//   step: { id, text?, attention?, done }   done: false, or why this is the last step:
//         'eos' | 'stop' | 'maxTokens' | 'context'
//
// step.text streams whole characters: a character split over two byte-level tokens (most CJK in
// GPT-2's vocabulary) is held back until it is complete, so the texts of all steps joined are
// decode(all the new ids), as transformers' TextStreamer does.
//
// Another call on the model between two steps (forward, a second generation) takes the cache;
// this generation then computes its sequence again from position 0 and goes on.
import { ErrorCode, fail } from '../core/errors.js';
import { idsArg } from '../core/args.js';
import { pickToken } from './sample.js';

/** The prompt, checked at once (a typed error at the call, not at the first step). */
export function readPrompt(prompt, config) {
  const P = config.n_positions;
  return Array.from(idsArg(prompt, 'model.generate: ids', { max: P, maxWhat: (n) => `${n} ids go past the model's n_positions = ${P}`, vocab: config.vocab_size }));
}

export async function* generate(rt, state, tokenizer, config, seq, sampling) {
  const me = {}, stream = textStream(tokenizer);
  let fed = 0;
  for (let step = 1; ; step++) {
    if (state.disposed) fail(ErrorCode.INVALID_ARGUMENT, 'model.generate: the model was disposed');
    if (state.owner !== me) { fed = 0; state.owner = me; }
    const r = rt.forward(seq.slice(fed), { pos: fed, attention: sampling.attention, lastOnly: true });
    fed = seq.length;
    const id = pickToken(r.logits.data, sampling);
    seq.push(id);
    const done = sampling.stop.includes(id) ? sampling.stopWhy : step >= sampling.maxTokens ? 'maxTokens'
      : seq.length >= config.n_positions ? 'context' : false;
    const out = { id };
    if (tokenizer) out.text = stream(id, done !== false);
    if (sampling.attention) out.attention = lastRows(r.attention, config);
    out.done = done;
    yield out;
    if (done) return;
  }
}

// (id, last) -> the text this step adds: decode of every new id so far, less what was given,
// less a trailing U+FFFD that more bytes may complete (given at the last step as it is)
export function textStream(tokenizer) {
  const ids = [];
  let given = '';
  return (id, last) => {
    ids.push(id);
    let text = tokenizer.decode(ids);
    if (!last) text = text.replace(/\ufffd+$/, '');
    if (!text.startsWith(given) || text.length <= given.length) return '';
    const add = text.slice(given.length);
    given = text;
    return add;
  };
}

// [layer][head] -> the last query's row over all positions so far (Float32Array of length m)
function lastRows({ data, shape: [, rows, m], slots }, config) {
  return slotsByHead(slots, config, (block) => {
    const at = (block * rows + rows - 1) * m;
    return data.slice(at, at + m);
  });
}

/** slots (L·H, from runtime.forward) -> [layer][head] of pick(block); null for a head not asked for. */
export function slotsByHead(slots, { n_layer: L, n_head: H }, pick) {
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => {
    const block = slots[l * H + h];
    return block < 0 ? null : pick(block);
  }));
}
