// page-files.js - a checkpoint folder's files as the reader picks or drops them, read in the
// browser: nothing is sent anywhere (issue 16). Used by page-checkpoint.js.
//
//   const picked = sortCheckpointFiles(input.files);     // { config, weights, vocab, merges, vocabTxt, ignored, problem }
//   const bytes = await readBytes(picked.weights, (read, total) => ...);
//   const files = await dropFiles(event.dataTransfer);   // a dropped folder is walked, one level deep and more
//
// readBytes reads File.stream() into one Uint8Array of file.size, allocated before the first
// byte: GPT-2 small's model.safetensors is 548 MB, and file.arrayBuffer() would give no progress
// and, on some browsers, a second copy. When the browser cannot allocate it, the RangeError is
// turned into an Error with code 'OUT_OF_MEMORY' and the size in its message.

/** Which file is which, by name: config.json, *.safetensors, vocab.json, merges.txt, vocab.txt. */
export function sortCheckpointFiles(list) {
  const out = { config: null, weights: null, vocab: null, merges: null, vocabTxt: null, ignored: [], problem: null };
  const weights = [];
  for (const file of Array.from(list ?? [])) {
    const name = file.name.toLowerCase();
    if (name === 'config.json') out.config = file;
    else if (name.endsWith('.safetensors')) weights.push(file);
    else if (name === 'vocab.json') out.vocab = file;
    else if (name === 'merges.txt') out.merges = file;
    else if (name === 'vocab.txt') out.vocabTxt = file;
    else out.ignored.push(file.name);
  }
  // a folder may hold model.safetensors beside others (adapters, shards): model.safetensors wins
  out.weights = weights.find((f) => f.name.toLowerCase() === 'model.safetensors') ?? weights[0] ?? null;
  out.ignored.push(...weights.filter((f) => f !== out.weights).map((f) => f.name));
  if (!out.config) out.problem = 'noConfig';
  else if (!out.weights) out.problem = (out.ignored.some((n) => /\.(bin|pt|pth|ckpt)$/i.test(n)) ? 'binOnly' : 'noWeights');
  else if (Boolean(out.vocab) !== Boolean(out.merges)) out.problem = out.vocab ? 'noMerges' : 'noVocab';
  return out;
}

/** The bytes of a File, read in chunks into one preallocated buffer; onProgress(read, total) after each chunk. */
export async function readBytes(file, onProgress = () => {}) {
  let bytes;
  try {
    bytes = new Uint8Array(file.size);
  } catch (e) {
    throw Object.assign(new Error(`could not allocate ${file.size} bytes for ${file.name} (${e.message})`), { code: 'OUT_OF_MEMORY' });
  }
  const reader = file.stream().getReader();
  let at = 0;
  onProgress(0, file.size);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > bytes.length) throw new Error(`${file.name} grew while it was read (more than ${file.size} bytes)`);
    bytes.set(value, at);
    at += value.length;
    onProgress(at, file.size);
  }
  if (at !== file.size) throw new Error(`${file.name}: read ${at} of ${file.size} bytes`);
  return bytes;
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
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB'];
  let v = n, u = -1;
  while (v >= 1000 && u < units.length - 1) { v /= 1000; u++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
