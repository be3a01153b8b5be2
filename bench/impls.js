// impls.js - the implementations under test, each loaded the way its users load it, behind one
// shape: { name, label, forward(inputs) -> Float32Array | Promise<Float32Array> }.
// inputs is { q, k, v }, each { data: Float32Array, shape: [rows, cols] }; forward returns the
// output (n, d_v) as a JS Float32Array, so every timing includes getting the inputs in and the
// output out.
//
// Modules are imported inside the loaders (dynamic import), so a process pays only for what it
// uses, and the cold-start child can time the import itself.

/** attnmap through its public API, { weights: false }. */
export async function loadOurs() {
  const { createAttention } = await import('../web/core/attention.js');
  const attn = await createAttention();
  return {
    name: 'ours', label: 'attnmap (wasm)', attn,
    forward: (inputs) => attn.attention(inputs, { weights: false }).output.data,
  };
}

/** The straightforward JavaScript version (bench/plain.js). */
export async function loadPlain() {
  const { plainAttention } = await import('./plain.js');
  return { name: 'plain', label: 'plain JS', forward: (inputs) => plainAttention(inputs).output.data };
}

/**
 * onnxruntime-web, wasm execution provider, one thread, SIMD. The graph is the bare attention
 * graph of onnx-model.js, with dynamic n and m; the scale is an initializer, so there is one
 * session per scale (per d_k), created on first use.
 */
export async function loadOrt() {
  const ort = await import('onnxruntime-web');
  const { attentionModel } = await import('./onnx-model.js');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
  const sessions = new Map();
  const session = async (dk) => {
    if (!sessions.has(dk)) {
      sessions.set(dk, await ort.InferenceSession.create(attentionModel({ scale: 1 / Math.sqrt(dk) }), {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      }));
    }
    return sessions.get(dk);
  };
  const tensor = ({ data, shape }) => new ort.Tensor('float32', data, shape);
  return {
    name: 'ort', label: 'onnxruntime-web', ort, session,
    async forward({ q, k, v }) {
      const s = sessions.get(q.shape[1]) ?? await session(q.shape[1]);
      const r = await s.run({ q: tensor(q), k: tensor(k), v: tensor(v) });
      return r.out.data;
    },
  };
}

/** TF.js with the wasm backend, one thread; tensors are disposed, the output read with dataSync. */
export async function loadTf() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('TF.js: the wasm backend did not initialise');
  await tf.ready();
  return {
    name: 'tf', label: 'TF.js wasm', tf, wasm,
    forward({ q, k, v }) {
      const out = tf.tidy(() => {
        const Q = tf.tensor2d(q.data, q.shape), K = tf.tensor2d(k.data, k.shape), V = tf.tensor2d(v.data, v.shape);
        const scores = tf.mul(tf.matMul(Q, K, false, true), tf.scalar(1 / Math.sqrt(q.shape[1])));
        return tf.matMul(tf.softmax(scores), V);
      });
      const data = out.dataSync();
      out.dispose();
      return data;
    },
  };
}

/**
 * onnxruntime-web running one multi-head self-attention layer (onnx-model.js mhaModel): 'ortMha'
 * with the contrib op com.microsoft MultiHeadAttention, 'ortOps' the same layer in plain ONNX ops.
 * The weights are initializers (constants the graph optimiser may see); only x is fed per call. The
 * sessions are created here, before any timing. Returns [{ name, forward } or { name, error }].
 */
export async function ortMhaLayers({ ort }, w, { n, dModel, heads }) {
  const { mhaModel } = await import('./onnx-model.js');
  const out = [];
  for (const [name, contrib] of [['ortMha', true], ['ortOps', false]]) {
    try {
      const session = await ort.InferenceSession.create(mhaModel({ dModel, heads, w, contrib }), {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      });
      out.push({ name, forward: async () => (await session.run({ x: new ort.Tensor('float32', w.x, [1, n, dModel]) })).out.data });
    } catch (e) {
      out.push({ name, error: e.message.split('\n')[0] });
    }
  }
  return out;
}

export const loaders = { ours: loadOurs, plain: loadPlain, ort: loadOrt, tf: loadTf };

/** Loads the named implementations; one that fails to load is reported and left out (ours throws). */
export async function loadAll(names, progress) {
  const impls = {};
  for (const name of names) {
    try { impls[name] = await loaders[name](); } catch (e) { progress(`${name}: failed to load: ${e.message}`); if (name === 'ours') throw e; }
  }
  return impls;
}
