// index.js - the model families attnmap runs, in one table the loader consults: config.json's
// model_type picks one. A family is one module: its config rules (readConfig), its tensors
// (checkpoint, for web/model/load/checkpoint.js) and how web/model/runtime.js runs it (runtime: its
// C struct, layout and entry points). A new family is one more module and one more line here.
import { ErrorCode, fail, describe } from '../../core/errors.js';
import gpt2 from './gpt2.js';
import llama from './llama.js';
import bert from './bert.js';

const FAMILIES = [gpt2, llama, bert];
const BY_NAME = new Map(FAMILIES.map((f) => [f.name, f]));
const BY_MODEL_TYPE = new Map(FAMILIES.flatMap((f) => f.modelTypes.map((t) => [t, f])));

/** All model_type values supported, for messages. */
export const MODEL_TYPES = [...BY_MODEL_TYPE.keys()];

/** The family named so ('gpt2', 'llama'). */
export function familyOf(name) {
  const f = BY_NAME.get(name);
  if (!f) fail(ErrorCode.INVALID_ARGUMENT, `no model family ${describe(name)}; there are ${[...BY_NAME.keys()].join(', ')}`);
  return f;
}

/** The family of a config.json's model_type, or undefined. */
export const familyOfModelType = (modelType) => BY_MODEL_TYPE.get(modelType);
