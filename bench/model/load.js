// load.js - one model loaded in a fresh process, for bench/model.js's memory and load-time row:
//
//   node --expose-gc bench/model/load.js attnmap|ort FOLDER N [VOCAB]
//
// Times the load from FOLDER (attnmap: loadModel(folder) of attnmap/model, reading
// model.safetensors and config.json; onnxruntime-web: InferenceSession.create of model.onnx, wasm
// execution provider, 1 thread, graph optimisation "all", and FOLDER/model.onnx.data as its
// external data when there: bench/model/make_onnx_llama.py writes one), then reads RSS (/proc/self/status) and
// the wasm memory (every WebAssembly instance created in this process, its exported memory's
// bytes), then runs one forward over N token ids ((i * 7919 + 13) % VOCAB, VOCAB 50257 unless
// given) and reads them again, and the peak RSS (VmHWM). One JSON line.
import fs from 'node:fs';
import path from 'node:path';

const status = (key) => Number(fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]) * 1024;

// every wasm memory this process instantiates with, exported (attnmap) or imported (ORT's
// threaded build), so that it can be read (neither model API exposes it)
const memories = new Set();
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async (source, imports) => {
  for (const mod of Object.values(imports ?? {})) for (const v of Object.values(mod ?? {})) if (v instanceof WebAssembly.Memory) memories.add(v);
  const r = await instantiate(source, imports);
  for (const v of Object.values((r instanceof WebAssembly.Instance ? r : r.instance).exports)) if (v instanceof WebAssembly.Memory) memories.add(v);
  return r;
};
const wasmBytes = () => [...memories].reduce((s, m) => s + m.buffer.byteLength, 0);
const settle = async () => { globalThis.gc?.(); await new Promise((r) => setTimeout(r, 50)); globalThis.gc?.(); };

const [which, folder, nArg, vocabArg] = process.argv.slice(2);
const n = Number(nArg), vocab = Number(vocabArg ?? 50257);
const ids = Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);
let forward;
const t0 = performance.now();
if (which === 'attnmap') {
  const { loadModel } = await import('../../web/model/model-node.js');
  const model = await loadModel(folder, { threads: 1 });
  forward = () => model.forward(ids).logits.data;
} else {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const data = path.join(folder, 'model.onnx.data');
  const externalData = fs.existsSync(data) ? [{ path: 'model.onnx.data', data }] : undefined;
  const session = await ort.InferenceSession.create(path.join(folder, 'model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all', externalData });
  const input = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]);
  forward = async () => (await session.run({ input_ids: input })).logits.data;
}
const loadMs = performance.now() - t0;
await settle();
const loaded = { rss: status('VmRSS'), wasm: wasmBytes(), peak: status('VmHWM') };
const out = await forward();
if (out.length % n !== 0) throw new Error(`load.js ${which}: unexpected logits`);
await settle();
console.log(JSON.stringify({ impl: which, n, loadMs, loaded, afterForward: { rss: status('VmRSS'), wasm: wasmBytes(), peak: status('VmHWM') } }));
process.exit(0);
