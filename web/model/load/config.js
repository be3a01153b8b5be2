// config.js - a checkpoint's config.json, read by its family's rules (web/model/families/), and
// refused when it asks for maths the runtime does not do.
//
//   readConfig(config)    config: an object or its JSON text (one leading BOM ignored)
//     -> { family, n_layer, n_head, n_embd, vocab_size, n_positions, layers, heads, kvHeads,
//          headDim, hidden, …the family's own keys, raw }  (frozen; raw: the object read)
//
// model_type picks the family: gpt2 (also when absent, as GPT-2's oldest files are), llama,
// qwen2, qwen3. Each family's file has the table of the keys it reads and what it refuses.
//
// Failures: INVALID_ARGUMENT when config is neither an object nor a string; INVALID_MODEL for a
// text that is not a JSON object, an unknown model_type, a missing or malformed size, or a
// supported-maths key with an unsupported value (named in the message); TOO_LARGE for a size
// above 2^31 - 1.
import { ErrorCode, fail, asError, describe } from '../../core/errors.js';
import { stripBom } from './text-files.js';
import { familyOfModelType, MODEL_TYPES } from '../families/index.js';
import { bad, has } from '../families/rules.js';

export function readConfig(config) {
  try {
    return read(config);
  } catch (e) {
    throw asError(e, 'readConfig: reading the config failed');
  }
}

function read(config) {
  let raw = config;
  if (typeof config === 'string') {
    try { raw = JSON.parse(stripBom(config)); } catch (e) { bad(`not valid JSON (${e.message})`); }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad(`config.json must hold a JSON object; it holds ${describe(raw)}`);
  } else if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    fail(ErrorCode.INVALID_ARGUMENT, `readConfig: config must be an object (config.json parsed) or its JSON text; received ${describe(config)}`);
  }
  const type = has(raw, 'model_type') ? raw.model_type : 'gpt2';
  const family = familyOfModelType(type);
  if (!family) bad(`model_type is ${describe(type)}; supported: ${MODEL_TYPES.map((t) => `"${t}"`).join(', ')}`);
  return Object.freeze({ ...family.readConfig(raw), raw });
}
