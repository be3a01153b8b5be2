// onnx-model.js - a bare attention graph as ONNX bytes, for the onnxruntime-web peer.
//
//   out = MatMul(Softmax(Mul(MatMul(q, Transpose(k)), scale)), v)
//   q (n, d_k), k (m, d_k), v (m, d_v) -> out (n, d_v); scale is an initializer (a scalar)
//
// A protobuf encoder for exactly the fields this graph needs, nothing else. Field numbers
// are those of onnx/onnx.proto3 (ONNX 1.x); only wire types 0 (varint) and 2 (length-delimited)
// appear (the one float, the scale, is a packed float_data). Every message is encoded as an
// array of byte chunks and concatenated once at the end.

// ---------------------------------------------------------------------------
// protobuf wire format

// a varint; negative int64 values are their 64-bit two's complement (10 bytes), as protobuf does
function varint(value) {
  let x = BigInt.asUintN(64, BigInt(value));
  const bytes = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) b |= 0x80;
    bytes.push(b);
  } while (x !== 0n);
  return Uint8Array.from(bytes);
}

const key = (field, wireType) => varint((field << 3) | wireType);
const concat = (chunks) => {
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let p = 0;
  for (const c of chunks) { out.set(c, p); p += c.length; }
  return out;
};
const utf8 = new TextEncoder();

const int = (field, value) => concat([key(field, 0), varint(value)]);
const bytes = (field, data) => concat([key(field, 2), varint(data.length), data]);
const string = (field, s) => bytes(field, utf8.encode(s));
const message = (field, chunks) => bytes(field, concat(chunks));

// ---------------------------------------------------------------------------
// the ONNX messages used (field numbers from onnx.proto3)

const FLOAT = 1;              // TensorProto.DataType.FLOAT
const ATTR_INT = 2;           // AttributeProto.AttributeType.INT
const ATTR_INTS = 7;          // AttributeProto.AttributeType.INTS

// TensorShapeProto.Dimension: dim_value = 1 (int64), dim_param = 2 (string)
const dim = (d) => (typeof d === 'number' ? int(1, d) : string(2, d));

// ValueInfoProto { name = 1, type = 2: TypeProto { tensor_type = 1: Tensor {
//   elem_type = 1, shape = 2: TensorShapeProto { dim = 1 (repeated) } } } }
function valueInfo(field, name, dims) {
  const shape = dims.map((d) => message(1, [dim(d)]));
  return message(field, [string(1, name), message(2, [message(1, [int(1, FLOAT), message(2, shape)])])]);
}

// AttributeProto { name = 1, i = 3, ints = 8 (repeated, unpacked), type = 20 }
function attribute(name, value) {
  if (Array.isArray(value)) return message(5, [string(1, name), ...value.map((x) => int(8, x)), int(20, ATTR_INTS)]);
  return message(5, [string(1, name), int(3, value), int(20, ATTR_INT)]);
}

// NodeProto { input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7 }
// (a domain only for contrib ops such as com.microsoft's)
function node(opType, inputs, outputs, attrs = {}, domain = null) {
  return message(1, [
    ...inputs.map((s) => string(1, s)),
    ...outputs.map((s) => string(2, s)),
    string(3, `${opType}_${outputs[0]}`),
    string(4, opType),
    ...Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    ...(domain === null ? [] : [string(7, domain)]),
  ]);
}

// TensorProto { dims = 1 (none: a scalar), data_type = 2, float_data = 4 (packed), name = 8 }
function scalarInitializer(name, value) {
  const f = new Uint8Array(4);
  new DataView(f.buffer).setFloat32(0, value, true);
  return message(5, [int(2, FLOAT), bytes(4, f), string(8, name)]);
}

/**
 * The bare attention graph as an ONNX ModelProto (bytes).
 * dims: { n, m, dk, dv }, each a number (fixed) or a string (a named dynamic dimension).
 */
export function attentionModel({ n = 'n', m = 'm', dk = 'd_k', dv = 'd_v', scale }) {
  const graph = [
    node('Transpose', ['k'], ['kt'], { perm: [1, 0] }),
    node('MatMul', ['q', 'kt'], ['scores']),
    node('Mul', ['scores', 'scale'], ['scaled']),
    node('Softmax', ['scaled'], ['weights'], { axis: -1 }),
    node('MatMul', ['weights', 'v'], ['out']),
    string(2, 'attention'),                         // GraphProto.name
    scalarInitializer('scale', scale),              // GraphProto.initializer = 5
    valueInfo(11, 'q', [n, dk]),                    // GraphProto.input = 11
    valueInfo(11, 'k', [m, dk]),
    valueInfo(11, 'v', [m, dv]),
    valueInfo(12, 'out', [n, dv]),                  // GraphProto.output = 12
  ];
  // ModelProto { ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 }
  // OperatorSetIdProto { domain = 1 ("" = ai.onnx), version = 2 }; opset 17 needs IR version 8
  return concat([
    int(1, 8),
    string(2, 'attnmap-bench'),
    message(7, graph),
    message(8, [string(1, ''), int(2, 17)]),
  ]);
}

// ---------------------------------------------------------------------------
// a multi-head attention layer (GPT-2 small's: bench.js times it against multiHeadAttention)

const INT64 = 7;              // TensorProto.DataType.INT64

// TensorProto { dims = 1 (repeated int64), data_type = 2, name = 8, raw_data = 9 (little-endian) }
function tensorInitializer(name, dims, data) {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return message(5, [...dims.map((x) => int(1, x)), int(2, data instanceof BigInt64Array ? INT64 : FLOAT), string(8, name), bytes(9, raw)]);
}

/**
 * A multi-head self-attention layer as an ONNX ModelProto (bytes), weights as initializers:
 *
 *   Q = x·wq + bq, K = x·wk + bk, V = x·wv + bv          (MatMul + Add each)
 *   heads = com.microsoft MultiHeadAttention(Q, K, V), num_heads = heads      (contrib: true)
 *         | per head: Softmax(Q_h·K_hᵀ·scale)·V_h via Reshape/Transpose, MatMul, Mul, Softmax
 *   out = heads·wo + bo
 *
 * x is (1, n, d_model) with n dynamic; w: { wq, wk, wv, wo, bq, bk, bv, bo } Float32Arrays in
 * the layout of attnmap's multiHeadAttention ((d_model, d_model) row-major, x·W).
 */
export function mhaModel({ dModel, heads, w, contrib = true }) {
  const dh = dModel / heads;
  const E = [dModel, dModel];
  const nodes = [];
  for (const p of ['q', 'k', 'v']) {
    nodes.push(node('MatMul', ['x', `w${p}`], [`${p}0`]), node('Add', [`${p}0`, `b${p}`], [`${p}p`]));
  }
  const inits = [
    ...['q', 'k', 'v', 'o'].map((p) => tensorInitializer(`w${p}`, E, w[`w${p}`])),
    ...['q', 'k', 'v', 'o'].map((p) => tensorInitializer(`b${p}`, [dModel], w[`b${p}`])),
  ];
  if (contrib) {
    nodes.push(node('MultiHeadAttention', ['qp', 'kp', 'vp'], ['concat'], { num_heads: heads }, 'com.microsoft'));
  } else {
    // (1, n, E) -> (1, n, h, dh) -> (1, h, n, dh); K to (1, h, dh, n)
    inits.push(tensorInitializer('split_shape', [4], BigInt64Array.from([0n, -1n, BigInt(heads), BigInt(dh)])),
      tensorInitializer('merge_shape', [3], BigInt64Array.from([0n, -1n, BigInt(dModel)])),
      tensorInitializer('scale', [], Float32Array.of(1 / Math.sqrt(dh))));
    for (const p of ['q', 'k', 'v']) nodes.push(node('Reshape', [`${p}p`, 'split_shape'], [`${p}4`]));
    nodes.push(
      node('Transpose', ['q4'], ['qh'], { perm: [0, 2, 1, 3] }),
      node('Transpose', ['k4'], ['kht'], { perm: [0, 2, 3, 1] }),
      node('Transpose', ['v4'], ['vh'], { perm: [0, 2, 1, 3] }),
      node('MatMul', ['qh', 'kht'], ['scores']),
      node('Mul', ['scores', 'scale'], ['scaled']),
      node('Softmax', ['scaled'], ['weights'], { axis: -1 }),
      node('MatMul', ['weights', 'vh'], ['oh']),
      node('Transpose', ['oh'], ['o4'], { perm: [0, 2, 1, 3] }),
      node('Reshape', ['o4', 'merge_shape'], ['concat']),
    );
  }
  nodes.push(node('MatMul', ['concat', 'wo'], ['o0']), node('Add', ['o0', 'bo'], ['out']));
  const graph = [
    ...nodes,
    string(2, 'mha'),
    ...inits,
    valueInfo(11, 'x', [1, 'n', dModel]),
    valueInfo(12, 'out', [1, 'n', dModel]),
  ];
  return concat([
    int(1, 8),
    string(2, 'attnmap-bench'),
    message(7, graph),
    message(8, [string(1, ''), int(2, 17)]),
    ...(contrib ? [message(8, [string(1, 'com.microsoft'), int(2, 1)])] : []),
  ]);
}
