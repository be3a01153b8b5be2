// model-node.js - attnmap/model in Node (the "./model" export's node condition): model.js, and
// loadModel(folder) reading a checkpoint folder as Hugging Face writes it.
//
//   const model = await loadModel('path/to/Qwen2.5-0.5B');   // or 'path/to/model.gguf' (F32, F16, BF16; gguf-weights.js)   // config.json; model.safetensors, or
//                        // model.safetensors.index.json and its shards; tokenizer.json (+
//                        // tokenizer_config.json), or vocab.json + merges.txt, or vocab.txt
//
// The files are opened as files-node.js opens them (no blocking, regular files only, no further
// than the size they report). The weights are never read whole: the header first, then each tensor straight
// into wasm memory, a piece at a time (safetensors.js makeSource), so a file above 2 GiB loads
// and memory holds the weights once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, AttentionError, fail, quote } from '../core/errors.js';
import { chooseGguf, forwardOnly, parseRepoId, readGgufFile } from './hub/hub.js';
import { hubSnapshot } from './hub/hub-node.js';
import { storeModelFile, MAX_ENTRIES } from './hub/stores-node.js';
import { loadModel as loadFiles } from './model.js';
import { makeSource } from './load/safetensors.js';
import { stripBom } from './load/text-files.js';
import { openRegular, readFully, readText } from './load/files-node.js';
import { useThreadHost } from './runtime.js';
import { spawnNode, build, cores } from './threads/threads-node.js';

useThreadHost({ spawn: spawnNode, build, cores });   // loadModel(…, { threads }): worker_threads

export { AttentionError };
export { ModelFetchError, fetchCheckpoint } from './load/fetch-checkpoint.js';
export { loadTokenizer } from './tokenizers/load-tokenizer.js';

/**
 * A safetensors file as a source that reads a piece at a time (close() when done); onRead(name,
 * bytes, size) after each read, for loadModel's onProgress: reading 500 MB from disk deserves the
 * progress a download gets (issue 39).
 */
function fileSource(file, onRead = () => {}) {
  const f = openRegular(file);
  if (!f) return undefined;
  const name = path.basename(file);
  let piece = new Uint8Array(0);
  const read = (begin, end) => {
    if (piece.length < end - begin) piece = new Uint8Array(end - begin);
    const out = piece.subarray(0, end - begin);
    readFully(f.fd, out, begin, file);
    onRead(name, out.length, f.size);
    return out;
  };
  const readInto = (begin, dest) => { readFully(f.fd, dest, begin, file); onRead(name, dest.length, f.size); };
  return { source: makeSource(f.size, read, readInto, false, { name }), close: () => fs.closeSync(f.fd) };
}

// onProgress({ file, loaded, total }) as each weights file is read: loaded counts its bytes read
// (the header is read twice, so it is capped at the size); a callback that throws is ignored
function progressOf(onProgress) {
  if (typeof onProgress !== 'function') return undefined;
  const loaded = new Map();
  return (file, n, total) => {
    loaded.set(file, Math.min(total, (loaded.get(file) ?? 0) + n));
    try { onProgress({ file, loaded: loaded.get(file), total }); } catch { /* the caller's problem, not the load's */ }
  };
}

const INDEX = 'model.safetensors.index.json';

// the weights: model.safetensors, or the index and every shard it names, each a source read a
// piece at a time; close() closes them all
function readWeightFiles(folder, onRead) {
  const at = (name) => path.join(folder, name);
  const single = fileSource(at('model.safetensors'), onRead);
  if (single) return { weights: single.source, close: single.close };
  const index = readText(at(INDEX));
  if (index === undefined) fail(ErrorCode.INVALID_MODEL, `${folder} has no model.safetensors nor ${INDEX} (other weight formats, such as pytorch_model.bin, are not read)`);
  const opened = [], shards = {};
  const close = () => { for (const f of opened) f.close(); };
  try {
    let map;
    try { map = JSON.parse(stripBom(index)).weight_map; } catch { map = null; }   // weights.js names what is wrong
    const names = map && typeof map === 'object' ? new Set(Object.values(map).filter((n) => typeof n === 'string')) : new Set();
    for (const name of names) {
      // a name with a folder in it is weights.js's to refuse: never opened here
      if (name.includes('/') || name.includes('\\') || name.includes('..') || name === '') continue;
      const f = fileSource(at(name), onRead);
      if (f) { opened.push(f); shards[name] = f.source; }
    }
  } catch (e) {
    close();
    throw e;
  }
  return { weights: { index, shards }, close };
}

/**
 * The files of a checkpoint folder, as loadModel({ ... }) takes them; close() releases the weights
 * files. onProgress({ file, loaded, total }) as the weights are read.
 */
export function readCheckpointFolder(folder, onProgress) {
  const stat = fs.statSync(folder, { throwIfNoEntry: false });
  if (!stat?.isDirectory()) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${folder} is not a folder (expected a checkpoint folder with config.json and model.safetensors)`);
  const at = (name) => path.join(folder, name);
  const config = readText(at('config.json'));
  if (config === undefined) fail(ErrorCode.INVALID_MODEL, `${folder} has no config.json`);
  const [tokenizer, vocab, merges, vocabTxt, tokenizerConfig] = ['tokenizer.json', 'vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer_config.json'].map((n) => readText(at(n)));
  const { weights, close } = readWeightFiles(folder, progressOf(onProgress));
  const files = { config, weights };
  try {
    if (tokenizer !== undefined) Object.assign(files, { tokenizer }, tokenizerConfig === undefined ? {} : { tokenizerConfig });
    else if (vocab !== undefined || merges !== undefined) Object.assign(files, { vocab, merges });
    else if (vocabTxt !== undefined) {
      files.vocabTxt = vocabTxt;
      // BERT vocabularies: tokenizer_config.json's do_lower_case, when it says
      try {
        const lower = tokenizerConfig === undefined ? undefined : JSON.parse(stripBom(tokenizerConfig)).do_lower_case;
        if (typeof lower === 'boolean') files.lowercase = lower;
      } catch (e) {
        fail(ErrorCode.INVALID_MODEL, `${at('tokenizer_config.json')}: not JSON (${e.message.slice(0, 200)})`);
      }
    }
  } catch (e) {
    close();
    throw e;
  }
  return { files, close };
}

// { folder }: a folder on disk, a shipped model's, or a hub repo's snapshot in the cache
// (downloaded if need be); { gguf }: a GGUF repo's file in that snapshot
async function folderOf(source, options) {
  if (fs.statSync(source, { throwIfNoEntry: false })?.isDirectory()) return localFolder(source, options.file);
  if (fs.existsSync(source)) return { folder: source };
  if (SHIPPED.has(source)) return { folder: path.join(MODELS, source) };
  if (parseRepoId(source)) {
    const { dir, gguf } = await hubSnapshot(source, options);
    return gguf === undefined ? { folder: dir } : { gguf: path.join(dir, gguf) };
  }
  return fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${quote(source)} is not a folder, a URL, a shipped model (${[...SHIPPED].join(', ')}) or a Hugging Face repo id such as "Qwen/Qwen2.5-0.5B"`);
}

// A folder on disk as a hub snapshot is read (hub.js chooseGguf): options.file, a .gguf in it;
// else a safetensors checkpoint where config.json and its weights are; else its one .gguf (several:
// INVALID_ARGUMENT naming them), else a checkpoint (whose missing files readCheckpointFolder names)
function localFolder(folder, file) {
  const listing = fs.readdirSync(folder, { withFileTypes: true }).slice(0, MAX_ENTRIES)
    .map((e) => ({ path: e.name, type: e.isDirectory() ? 'directory' : 'file' }));
  const gguf = chooseGguf(listing, folder, readGgufFile(file));
  return gguf ? { gguf: path.join(folder, gguf.path) } : { folder };
}

// the checkpoints shipped in the package (web/models/NAME/), by name
const SHIPPED = new Set(['toy-zh']);
const MODELS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'models');

/**
 * loadModel(files) as in model.js; loadModel(folder) with the path of a checkpoint folder;
 * loadModel('toy-zh'), a model shipped in the package (when no folder of that name is there);
 * loadModel('https://…/folder/'), fetched (fetch-checkpoint.js; options { files, stallMs, minRate, graceMs });
 * loadModel('Qwen/Qwen2.5-0.5B'), a repo on the Hugging Face Hub: from the cache Python's
 * transformers shares, or downloaded into it (hub-node.js; options { revision, offline,
 * cacheDir, hubUrl, token, onProgress }); a GGUF repo's one .gguf file, options.file or the
 * repo's only one ('Qwen/Qwen2.5-0.5B-Instruct-GGUF', { file: 'qwen2.5-0.5b-instruct-q4_0.gguf' }).
 * loadModel('ollama:qwen2.5:0.5b'), loadModel('lmstudio:PUBLISHER/REPO[/FILE.gguf]'): a GGUF file
 * of Ollama's or LM Studio's store, offline (stores-node.js).
 */
export async function loadModel(source, options = {}) {
  if (typeof source !== 'string') return loadFiles(source, options);
  if (/^https?:\/\//i.test(source)) return loadFiles(source, options);
  const onProgress = forwardOnly(options.onProgress);   // a repo's download, then the reading: forward only
  const stored = storeModelFile(source);   // 'ollama:NAME[:TAG]', 'lmstudio:PUBLISHER/REPO[/FILE]': stores-node.js
  if (stored) return loadGgufFile(stored, onProgress, options);
  if (/\.gguf$/i.test(source) && fs.statSync(source, { throwIfNoEntry: false })?.isFile()) return loadGgufFile(source, onProgress, options);
  const { folder, gguf } = await folderOf(source, { ...options, onProgress });
  if (gguf) return loadGgufFile(gguf, onProgress, options);
  const { files, close } = readCheckpointFolder(folder, onProgress);
  try {
    return await loadFiles(files, { onProgress, threads: options.threads, offThread: options.offThread });
  } finally {
    close();
  }
}
// a .gguf file on disk, read by ranges (its tensors straight into wasm memory: the file is never held whole)
async function loadGgufFile(file, onProgress, { threads, offThread }) {
  const f = fileSource(file, progressOf(onProgress));
  if (!f) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${file} is not a regular file`);
  try {
    return await loadFiles({ gguf: f.source }, { onProgress, threads, offThread });
  } finally {
    f.close();
  }
}

export { hubSize, cachedModels, deleteCachedModel } from './hub/hub-cache-node.js';
