// page-files.js - a checkpoint folder's files, or one .gguf file, as the reader picks or drops
// them, read in the browser: nothing is sent anywhere (issues 16, 38). Used by page-checkpoint.js.
//
//   const picked = sortCheckpointFiles(input.files);     // { gguf, config, weights, tokenizer, …, ignored, problem }
//   const files = await dropFiles(event.dataTransfer);   // a dropped folder is walked, one level deep and more
//   const { files, name } = await modelFiles(picked);    // loadModel's files ({ gguf } or { config, weights, … }), the model's name
//
// The weights are not read here: loadModel reads each tensor's slice of the File straight into
// WebAssembly memory (web/model/load/weights.js), so a 1 GB checkpoint needs 1 GB, not 2, and its
// progress is loadModel's onProgress.

const INDEX = 'model.safetensors.index.json';
const isGguf = (f) => /\.gguf$/i.test(f.name);
// a part of a file that llama.cpp's llama-gguf-split cut in several: model-00001-of-00003.gguf
const isPart = (f) => Number(/-\d{5}-of-(\d{5})\.gguf$/i.exec(f.name)?.[1] ?? 1) > 1;

/**
 * Which file is which, by name. A .gguf file holds a whole checkpoint (config, tensors and
 * tokenizer in its metadata): one among the files is the checkpoint, the others are not used;
 * several are a question (problem 'manyGguf', or 'ggufSplit' for the parts of a split file), with
 * their names in ggufs. Without one: config.json; the weights (model.safetensors, or the index of a
 * sharded checkpoint and its *.safetensors shards); the tokenizer (tokenizer.json with
 * tokenizer_config.json, or vocab.json + merges.txt, or vocab.txt). The weights (and the .gguf)
 * are Files, read slice by slice by loadModel; the rest is small. -> { gguf, ggufs, config,
 * weights, tokenizer, tokenizerConfig, vocab, merges, vocabTxt, ignored, problem }
 */
export function sortCheckpointFiles(list) {
  const out = { gguf: null, ggufs: [], config: null, weights: null, tokenizer: null, tokenizerConfig: null, vocab: null, merges: null, vocabTxt: null, ignored: [], problem: null };
  const files = Array.from(list ?? []);
  const ggufs = files.filter(isGguf);
  if (ggufs.length) return sortGguf(out, files, ggufs);
  const NAMES = { 'config.json': 'config', 'tokenizer.json': 'tokenizer', 'tokenizer_config.json': 'tokenizerConfig', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'vocab.txt': 'vocabTxt' };
  const weights = [];
  let index = null;
  for (const file of files) {
    const name = file.name.toLowerCase();
    if (Object.hasOwn(NAMES, name)) out[NAMES[name]] = file;
    else if (name === INDEX) index = file;
    else if (name.endsWith('.safetensors')) weights.push(file);
    else out.ignored.push(file.name);
  }
  const single = weights.find((f) => f.name.toLowerCase() === 'model.safetensors');
  // a folder may hold model.safetensors beside others (adapters): model.safetensors wins; without
  // it, an index and its shards (the index names which; weights.js checks them all)
  if (single || !index) {
    out.weights = single ?? weights[0] ?? null;
    out.ignored.push(...weights.filter((f) => f !== out.weights).map((f) => f.name), ...(index ? [index.name] : []));
  } else {
    out.weights = { index, shards: Object.fromEntries(weights.map((f) => [f.name, f])) };
  }
  if (out.tokenizer) out.ignored.push(...['vocab', 'merges', 'vocabTxt'].filter((k) => out[k]).map((k) => out[k].name));
  if (!out.config) out.problem = 'noConfig';
  else if (!out.weights) out.problem = (out.ignored.some((n) => /\.(bin|pt|pth|ckpt)$/i.test(n)) ? 'binOnly' : 'noWeights');
  else if (!out.tokenizer && Boolean(out.vocab) !== Boolean(out.merges)) out.problem = out.vocab ? 'noMerges' : 'noVocab';
  return out;
}

// one .gguf: the checkpoint, every other file not used (tokenizer files too: the file's own
// tokenizer is read, so that the two cannot disagree); several: which one is the reader's to say
function sortGguf(out, files, ggufs) {
  out.ggufs = ggufs.map((f) => f.name);
  if (ggufs.some(isPart)) out.problem = 'ggufSplit';
  else if (ggufs.length > 1) out.problem = 'manyGguf';
  else out.gguf = ggufs[0];
  out.ignored = files.filter((f) => !isGguf(f)).map((f) => f.name);
  return out;
}

/** The bytes to read: the .gguf, or picked.weights (one File, or the index and its shards). */
export function weightsSize(picked) {
  const w = picked.gguf ?? picked.weights;
  return (w.index ? [w.index, ...Object.values(w.shards)] : [w]).reduce((sum, f) => sum + f.size, 0);
}

/**
 * loadModel's files for what was picked, and the model's name: a .gguf alone (its tokenizer is in
 * its metadata; its name the file's), or the folder's small files as text beside its weights.
 */
export async function modelFiles(picked) {
  if (picked.gguf) return { files: { gguf: picked.gguf }, name: picked.gguf.name };
  const text = (f) => (f ? f.text() : undefined);
  const [config, tokenizer, tokenizerConfig, vocab, merges, vocabTxt] = await Promise.all(
    [picked.config, picked.tokenizer, picked.tokenizerConfig, picked.vocab, picked.merges, picked.vocabTxt].map(text));
  const tokenizerFiles = tokenizer !== undefined ? { tokenizer, tokenizerConfig } : vocab !== undefined ? { vocab, merges } : vocabTxt !== undefined ? { vocabTxt } : {};
  return { files: { config, weights: picked.weights, ...tokenizerFiles }, name: modelName(config, picked.weights.index ?? picked.weights) };
}

/** The model's name for data-model: config.json's _name_or_path, else the weights file's folder-less name. */
function modelName(configText, weightsFile) {
  try {
    const c = JSON.parse(configText);
    if (typeof c._name_or_path === 'string' && c._name_or_path.trim()) return c._name_or_path.trim().split('/').slice(-2).join('/');
  } catch { /* loadModel accepted it: cannot happen */ }
  return weightsFile.webkitRelativePath?.split('/')[0] || '';   // (a dropped folder's name; none: the words say 'the checkpoint')
}

/** The files of a drop: plain files, and the files inside dropped folders (webkitGetAsEntry). */
export async function dropFiles(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? []).map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.some((e) => e.isDirectory)) return Array.from(dataTransfer.files ?? []);
  const files = [];
  const walk = async (entry, depth) => {
    if (entry.isFile) files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    else if (entry.isDirectory && depth < 3) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (!batch.length) break;
        for (const child of batch) await walk(child, depth + 1);
      }
    }
  };
  for (const entry of entries) await walk(entry, 0);
  return files;
}

/** "3 7 5", "3, 7, 5" or "[3, 7, 5]" -> [3, 7, 5]; anything else -> null. */
export function parseIds(text) {
  const m = /^\s*\[?([\d\s,]*)\]?\s*$/.exec(text);
  if (!m) return null;
  const ids = m[1].split(/[\s,]+/).filter(Boolean).map(Number);
  return ids.length && ids.every(Number.isSafeInteger) ? ids : null;
}

/** 548 MB, 12.3 kB: bytes for people (decimal units, as file managers show them). */
export function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '?';   // a size the hub did not give
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB'];
  let v = n, u = -1;
  while (v >= 1000 && u < units.length - 1) { v /= 1000; u++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
