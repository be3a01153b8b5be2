// weights.js - a checkpoint's weights as one table of tensors, from one safetensors file or from
// a sharded checkpoint (model.safetensors.index.json and its shards), each tensor knowing the
// file (source) its bytes are in.
//
//   await readWeights(weights)
//     weights: one file (a Uint8Array, an ArrayBuffer, a source: safetensors.js makeSource, or
//     a Blob/File), or { index, shards: { name: one file } } with index the index file's text,
//     parsed object or File
//     -> { tensors: Map<name, info + { source }>, metadata, files: [names] }
//   options.onProgress({ file, loaded, total }): as a File's bytes are read (the header now, the
//   tensors as the runtime copies them into wasm memory), or a download's come (a source with
//   watch: fetch-source.js)
//   options.opened: a Set that gets each source with a close() (a download's) as it is read, for
//   the caller to close when the tensors are in wasm memory
//
// The index: { "metadata": {...}, "weight_map": { tensor: shard file } }, as transformers'
// save_pretrained writes it. Refused (INVALID_MODEL, naming the file and the tensor): an index
// that is not that; a shard name with a folder in it ("/", "\", "..") or that is not a plain
// file name; a shard the index names and the files do not have; a tensor the index maps to a
// shard that lacks it, one found in two shards, one in a shard that the index does not list.
// Every rule of the safetensors reader applies to each shard.
import { ErrorCode, fail, describe, quote } from '../../core/errors.js';
import { parseSafetensors, openSafetensors, makeSource, isSource, bytesSource } from './safetensors.js';
import { stripBom } from './text-files.js';

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);
const INDEX = 'model.safetensors.index.json';
export const MAX_SHARDS = 4096;

/** A Blob (a File from an <input>) as a source read slice by slice: reads are promises; onRead(bytes) after each. */
export const blobSource = (blob, onRead = () => {}) => makeSource(blob.size,
  (begin, end) => blob.slice(begin, end).arrayBuffer().then((b) => { onRead(b.byteLength); return new Uint8Array(b); }), undefined, true);

const isBlob = (x) => typeof Blob === 'function' && x instanceof Blob;

// one file's parse: sync for bytes and sync sources, async for a Blob (whose reads are counted)
// and a download (whose bytes are counted as they come)
async function parseOne(file, label, progress, opened) {
  if (isBlob(file)) return openSafetensors(blobSource(file, (n) => progress?.(label, n, file.size)), label);
  const src = isSource(file) ? file : bytesSource(file, `loadModel: weights (${label})`);
  if (typeof src.close === 'function') opened?.add(src);
  if (progress && typeof src.watch === 'function') src.watch((n) => progress(label, n, src.size));
  return src.async ? openSafetensors(src, label) : parseSafetensors(src, label);
}

// onProgress({ file, loaded, total }) as a File's bytes are read: loaded counts each file from 0
function progressOf(onProgress) {
  if (!onProgress) return undefined;
  const loaded = new Map();
  return (file, n, total) => {
    loaded.set(file, (loaded.get(file) ?? 0) + n);
    try { onProgress({ file, loaded: Math.min(loaded.get(file), total), total }); } catch { /* the caller's problem, not the load's */ }
  };
}

export async function readWeights(weights, { onProgress, opened } = {}) {
  const progress = progressOf(onProgress);
  if (weights !== null && typeof weights === 'object' && !isBlob(weights) && !isSource(weights) &&
      !(weights instanceof Uint8Array) && !(weights instanceof ArrayBuffer)) {
    return readSharded(weights, progress, opened);
  }
  const parsed = await parseOne(weights, 'model.safetensors', progress, opened);
  for (const info of parsed.tensors.values()) info.source = parsed.source;
  return { tensors: parsed.tensors, metadata: parsed.metadata, files: ['model.safetensors'] };
}

function readIndex(index) {
  let raw = index;
  if (typeof index === 'string') {
    try { raw = JSON.parse(stripBom(index)); } catch (e) { bad(`${INDEX}: not valid JSON (${e.message.slice(0, 200)})`); }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad(`${INDEX} must hold a JSON object; it holds ${describe(raw)}`);
  const map = raw.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) bad(`${INDEX}: weight_map must be an object { tensor: shard file }; received ${describe(map)}`);
  const byFile = new Map();
  for (const [tensor, file] of Object.entries(map)) {
    if (typeof file !== 'string' || !isFileName(file)) {
      bad(`${INDEX}: tensor ${quote(tensor)} maps to ${typeof file === 'string' ? quote(file) : describe(file)}, which is not a file name in the checkpoint's folder`);
    }
    if (!byFile.has(file)) byFile.set(file, []);
    byFile.get(file).push(tensor);
  }
  if (byFile.size > MAX_SHARDS) bad(`${INDEX} names ${byFile.size} shards; at most ${MAX_SHARDS} are read`);
  return byFile;
}

async function readSharded(weights, progress, opened) {
  const { index, shards } = weights;
  if (shards === null || typeof shards !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `loadModel: weights must be one safetensors file or { index, shards: { name: file } }; received ${describe(weights)}`);
  const byFile = readIndex(isBlob(index) ? await index.text() : index), tensors = new Map(), where = new Map();
  for (const [file, names] of byFile) {
    if (!Object.hasOwn(shards, file)) bad(`${INDEX} maps ${names.length} tensor${names.length === 1 ? '' : 's'} (${quote(names[0])}…) to ${quote(file)}, which is missing`);
    const parsed = await parseOne(shards[file], file, progress, opened);
    const listed = new Set(names);
    for (const [name, info] of parsed.tensors) {
      if (where.has(name)) bad(`tensor ${quote(name)} is in two shards, ${quote(where.get(name))} and ${quote(file)}`);
      if (!listed.has(name)) bad(`tensor ${quote(name)} is in ${quote(file)} but ${INDEX} ${byFileHas(byFile, name) ? 'maps it to another shard' : 'does not list it'}`);
      where.set(name, file);
      tensors.set(name, Object.assign(info, { source: parsed.source }));
    }
    for (const name of names) if (!parsed.tensors.has(name)) bad(`${INDEX} maps tensor ${quote(name)} to ${quote(file)}, which does not have it`);
  }
  return { tensors, metadata: null, files: [...byFile.keys()] };
}

// a plain file name: no folder ("/", "\\", ".."), no control character, not empty
const isFileName = (f) => f.length > 0 && f.length <= 255 && !f.includes('..') && ![...f].some((ch) => ch === '/' || ch === '\\' || ch.charCodeAt(0) < 0x20);

const byFileHas = (byFile, name) => [...byFile.values()].some((names) => names.includes(name));
