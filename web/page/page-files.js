// page-files.js - a checkpoint folder's files as the reader picks or drops them, read in the
// browser: nothing is sent anywhere (issue 16). Used by page-checkpoint.js.
//
//   const picked = sortCheckpointFiles(input.files);     // { config, weights, tokenizer, …, ignored, problem }
//   const files = await dropFiles(event.dataTransfer);   // a dropped folder is walked, one level deep and more
//
// The weights are not read here: loadModel reads each tensor's slice of the File straight into
// WebAssembly memory (web/model/load/weights.js), so a 1 GB checkpoint needs 1 GB, not 2, and its
// progress is loadModel's onProgress.

const INDEX = 'model.safetensors.index.json';

/**
 * Which file is which, by name: config.json; the weights (model.safetensors, or the index of a
 * sharded checkpoint and its *.safetensors shards); the tokenizer (tokenizer.json with
 * tokenizer_config.json, or vocab.json + merges.txt, or vocab.txt). The weights are Files,
 * read slice by slice by loadModel; the rest is small. -> { config, weights, tokenizer,
 * tokenizerConfig, vocab, merges, vocabTxt, ignored, problem }
 */
export function sortCheckpointFiles(list) {
  const out = { config: null, weights: null, tokenizer: null, tokenizerConfig: null, vocab: null, merges: null, vocabTxt: null, ignored: [], problem: null };
  const NAMES = { 'config.json': 'config', 'tokenizer.json': 'tokenizer', 'tokenizer_config.json': 'tokenizerConfig', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'vocab.txt': 'vocabTxt' };
  const weights = [];
  let index = null;
  for (const file of Array.from(list ?? [])) {
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
  else if (!out.weights) out.problem = (out.ignored.some((n) => /\.(bin|pt|pth|ckpt|gguf)$/i.test(n)) ? 'binOnly' : 'noWeights');
  else if (!out.tokenizer && Boolean(out.vocab) !== Boolean(out.merges)) out.problem = out.vocab ? 'noMerges' : 'noVocab';
  return out;
}

/** The size of picked.weights: one File, or the index and its shards. */
export const weightsSize = (w) => (w.index ? [w.index, ...Object.values(w.shards)] : [w]).reduce((sum, f) => sum + f.size, 0);

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
