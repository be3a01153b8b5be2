// model-node.js - attnmap/model in Node (the "./model" export's node condition): model.js, and
// loadModel(folder) reading a checkpoint folder as Hugging Face writes it.
//
//   const model = await loadModel('path/to/gpt2');   // config.json, model.safetensors,
//                                                     // vocab.json + merges.txt or vocab.txt
import fs from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, AttentionError, fail } from '../core/errors.js';
import { loadModel as loadFiles } from './model.js';

export { AttentionError };

async function readOptional(file, encoding) {
  try {
    return await fs.readFile(file, encoding);
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    throw new AttentionError(ErrorCode.INVALID_MODEL, `${file}: cannot be read (${e.code ?? e.message})`, { cause: e });
  }
}

/** The files of a checkpoint folder, as loadModel({ ... }) takes them. */
export async function readCheckpointFolder(folder) {
  const stat = await fs.stat(folder).catch(() => null);
  if (!stat?.isDirectory()) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${folder} is not a folder (expected a checkpoint folder with config.json and model.safetensors)`);
  const at = (name) => path.join(folder, name);
  const [config, weights, vocab, merges, vocabTxt, tokenizerConfig] = await Promise.all([
    readOptional(at('config.json'), 'utf8'), readOptional(at('model.safetensors')),
    readOptional(at('vocab.json'), 'utf8'), readOptional(at('merges.txt'), 'utf8'),
    readOptional(at('vocab.txt'), 'utf8'), readOptional(at('tokenizer_config.json'), 'utf8'),
  ]);
  if (config === undefined) fail(ErrorCode.INVALID_MODEL, `${folder} has no config.json`);
  if (weights === undefined) fail(ErrorCode.INVALID_MODEL, `${folder} has no model.safetensors (other weight formats, such as pytorch_model.bin, are not read)`);
  const files = { config, weights };
  if (vocab !== undefined || merges !== undefined) Object.assign(files, { vocab, merges });
  else if (vocabTxt !== undefined) {
    files.vocabTxt = vocabTxt;
    // BERT vocabularies: tokenizer_config.json's do_lower_case, when it says
    try {
      const lower = tokenizerConfig === undefined ? undefined : JSON.parse(tokenizerConfig).do_lower_case;
      if (typeof lower === 'boolean') files.lowercase = lower;
    } catch (e) {
      fail(ErrorCode.INVALID_MODEL, `${at('tokenizer_config.json')}: not JSON (${e.message})`);
    }
  }
  return files;
}

/** loadModel(files) as in model.js, or loadModel(folder) with the path of a checkpoint folder. */
export async function loadModel(source) {
  return loadFiles(typeof source === 'string' ? await readCheckpointFolder(source) : source);
}
