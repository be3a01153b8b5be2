// encoder.js - what a model of an encoder family (BERT) offers: the whole text at once, every
// token seeing every other, and fill-mask in place of generation. model.js puts these on the
// Model when config.encoder is true.
//
//   const { ids, tokenTypes } = model.encode('猫吃鱼', '鱼吃猫');   // [CLS] 猫 吃 鱼 [SEP] 鱼 吃 猫 [SEP]
//   const { logits, attention } = model.forward(ids, { attention: true, tokenTypes, mask });
//   model.fillMask('猫吃[MASK]', { topK: 5 });   // [{ index: 3, top: [{ id, token, text, p }, …] }]
//   model.fillMask('猫吃[MASK]', { pair: '鱼吃猫' });   // the gap read with a second sentence
//
// forward's result: logits (n, vocab_size) through the masked-LM head when the checkpoint has
// one, else hidden (n, hidden_size), the last layer's states; attention[layer][head] (n, n) when
// asked. mask: 1 for a real token, 0 for padding (a key no query sees).
import { ErrorCode, fail, describe } from '../core/errors.js';
import { topK } from './sample.js';

const MASK_TOKENS = ['[MASK]', '<mask>'];
const MAX_TOP_K = 1000;

/**
 * encode, forward and fillMask of an encoder; readForward and forwardResult are model.js's, and
 * live(name), which fails once the model is disposed (a getter of the options may do it).
 */
export function encoderApi(rt, config, tokenizer, { needTokenizer, live, readForward, forwardResult, thenDo }) {
  // one text with the special tokens BERT reads ([CLS] … [SEP]): WordPiece adds them when asked,
  // a tokenizer.json's post-processor by default
  const encodeOne = (text) => (tokenizer.kind === 'wordpiece' ? tokenizer.encode(text, { specialTokens: true }) : tokenizer.encode(text));
  // forward through run: the runtime's forward, or its forwardAsync (then a promise)
  const forwardBy = (run) => (ids, options = {}) => {
    const { attention, heads, tokenTypes, mask } = readForward(options, config, ['tokenTypes', 'mask']);
    live('forward');
    const given = { tokenTypes, mask, heads };
    for (const key of Object.keys(given)) if (given[key] === undefined) delete given[key];
    return thenDo(run(ids, { attention, ...given }), (r) => forwardResult(r, config, attention, r.logits ? { logits: r.logits } : { hidden: r.hidden }));
  };
  const forward = forwardBy(rt.forward);
  return {
    encode(a, b) {
      needTokenizer('encode');
      if (typeof a !== 'string') fail(ErrorCode.INVALID_ARGUMENT, `model.encode(a, b?): a must be a string; received ${describe(a)}`);
      if (b === undefined) {
        const ids = encodeOne(a);
        return { ids, tokenTypes: ids.map(() => 0) };
      }
      return tokenizer.encodePair(a, b);
    },
    forward,
    forwardAsync: forwardBy(rt.forwardAsync),
    fillMask(text, options = {}) {
      needTokenizer('fillMask');
      const k = readFillOptions(options);
      live('fillMask');
      const maskId = MASK_TOKENS.map((t) => tokenizer.idOf(t)).find((id) => id !== undefined);
      if (maskId === undefined) fail(ErrorCode.INVALID_ARGUMENT, 'model.fillMask: the tokenizer has no [MASK] token');
      if (typeof text !== 'string') fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: text must be a string; received ${describe(text)}`);
      const { ids, tokenTypes } = k.pair === undefined ? { ids: encodeOne(text) } : tokenizer.encodePair(text, k.pair);
      const at = ids.flatMap((id, i) => (id === maskId ? [i] : []));
      if (at.length === 0) fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: the text has no ${tokenizer.tokens([maskId])[0]} to fill`);
      const { logits } = forward(ids, tokenTypes ? { tokenTypes } : {});
      if (!logits) fail(ErrorCode.INVALID_ARGUMENT, 'model.fillMask: this checkpoint has no masked-LM head (cls.predictions): it is a BertModel, not a BertForMaskedLM');
      const V = config.vocab_size;
      return at.map((index) => ({ index, top: topTokens(logits.data.subarray(index * V, (index + 1) * V), k.topK, tokenizer) }));
    },
  };
}

// fillMask's options -> { topK, pair }
function readFillOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: options must be an object like { topK: 5 }; received ${describe(options)}`);
  for (const key of Object.keys(options)) if (key !== 'topK' && key !== 'pair') fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: unknown option "${String(key).slice(0, 40)}"; expected topK or pair`);
  const k = options.topK ?? 5;
  if (!Number.isInteger(k) || k < 1 || k > MAX_TOP_K) fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: topK must be an integer in [1, ${MAX_TOP_K}]; received ${describe(k)}`);
  const { pair } = options;
  if (pair !== undefined && typeof pair !== 'string') fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask: pair must be a string (the second sentence); received ${describe(pair)}`);
  return { topK: k, pair };
}

// the k likeliest tokens of one row of logits, softmax in float64
function topTokens(row, k, tokenizer) {
  let max = -Infinity, sum = 0;
  for (const x of row) if (x > max) max = x;
  for (const x of row) sum += Math.exp(x - max);
  return topK(row, k).map((id) => ({ id, token: tokenizer.tokens([id])[0], text: tokenizer.decode([id]), p: Math.exp(row[id] - max) / sum }));
}
