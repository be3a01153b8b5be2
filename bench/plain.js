// plain.js - scaled dot-product attention in plain JavaScript, the benchmark's baseline.
//
// What a careful JS programmer writes without reaching for WebAssembly: flat row-major
// Float32Array inputs, one query row at a time, the row's true maximum subtracted before
// exp, sums in double precision (JS numbers), no allocation inside the loops.
//
//   q (n, d_k), k (m, d_k), v (m, d_v) -> out (n, d_v)

/**
 * @param {{ q: {data: Float32Array, shape: number[]}, k: {...}, v: {...} }} inputs
 * @param {{ scale?: number }} [options] scale defaults to 1/√d_k
 * @returns {{ output: { data: Float32Array, shape: [number, number] } }}
 */
export function plainAttention({ q, k, v }, { scale } = {}) {
  const [n, dk] = q.shape, [m] = k.shape, [, dv] = v.shape;
  const Q = q.data, K = k.data, V = v.data;
  const s = scale ?? 1 / Math.sqrt(dk);
  const out = new Float32Array(n * dv);
  const row = new Float64Array(m);     // one row of scores, then of weights
  const acc = new Float64Array(dv);    // one output row
  for (let i = 0; i < n; i++) {
    const qi = i * dk;
    // pass 1: query dot key, scaled, and the row's maximum
    let max = -Infinity;
    for (let j = 0; j < m; j++) {
      const kj = j * dk;
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += Q[qi + c] * K[kj + c];
      const x = dot * s;
      row[j] = x;
      if (x > max) max = x;
    }
    // pass 2: exp and sum
    let sum = 0;
    for (let j = 0; j < m; j++) {
      const e = Math.exp(row[j] - max);
      row[j] = e;
      sum += e;
    }
    // passes 3 and 4: weighted sum of values, normalized once at the end
    acc.fill(0);
    for (let j = 0; j < m; j++) {
      const w = row[j], vj = j * dv;
      for (let c = 0; c < dv; c++) acc[c] += w * V[vj + c];
    }
    const inv = 1 / sum, o = i * dv;
    for (let c = 0; c < dv; c++) out[o + c] = acc[c] * inv;
  }
  return { output: { data: out, shape: [n, dv] } };
}
