// widen.js - a BF16 checkpoint's weights widened to F32, exactly (a BF16 value is the top half of
// a float32: the widened value is the same number), for bench/llama.js: the F32 checkpoint that
// attnmap and onnxruntime-web run is then the BF16 one's weights, not another draw.
//
//   widenCheckpoint(fromDir, toDir)   writes toDir/config.json (torch_dtype float32) and
//                                      toDir/model.safetensors (every BF16 tensor as F32, same order)
//
// Streamed a piece at a time, as scripts/random-checkpoint.js writes: a 1 GB file needs a few MB.
import fs from 'node:fs';
import path from 'node:path';

const PIECE = 1 << 22;   // bytes of BF16 read at a time

/** Returns { bytes } of the F32 model.safetensors. */
export function widenCheckpoint(fromDir, toDir) {
  fs.mkdirSync(toDir, { recursive: true });
  const config = JSON.parse(fs.readFileSync(path.join(fromDir, 'config.json'), 'utf8'));
  fs.writeFileSync(path.join(toDir, 'config.json'), `${JSON.stringify({ ...config, torch_dtype: 'float32' }, null, 2)}\n`);

  const src = fs.openSync(path.join(fromDir, 'model.safetensors'), 'r');
  try {
    const len = Buffer.alloc(8);
    fs.readSync(src, len, 0, 8, 0);
    const headLen = Number(len.readBigUInt64LE());
    const headBytes = Buffer.alloc(headLen);
    fs.readSync(src, headBytes, 0, headLen, 8);
    const header = JSON.parse(headBytes.toString('utf8'));
    // the tensors in file order, each F32 at twice its BF16 offsets
    const tensors = Object.entries(header).filter(([k]) => k !== '__metadata__').sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
    const out = { __metadata__: header.__metadata__ ?? { format: 'pt' } };
    let at = 0;
    for (const [name, t] of tensors) {
      if (t.dtype !== 'BF16') throw new Error(`widen: ${name} is ${t.dtype}; only BF16 is widened`);
      if (t.data_offsets[0] !== at) throw new Error(`widen: ${name} starts at ${t.data_offsets[0]}, not right after the tensor before it (${at})`);
      at = t.data_offsets[1];
      out[name] = { dtype: 'F32', shape: t.shape, data_offsets: t.data_offsets.map((x) => 2 * x) };
    }
    let head = Buffer.from(JSON.stringify(out));
    head = Buffer.concat([head, Buffer.alloc((8 - (head.length % 8)) % 8, 0x20)]);
    const dst = fs.openSync(path.join(toDir, 'model.safetensors'), 'w');
    try {
      len.writeBigUInt64LE(BigInt(head.length));
      fs.writeSync(dst, len);
      fs.writeSync(dst, head);
      const from = Buffer.alloc(PIECE), to = Buffer.alloc(2 * PIECE);
      const half = new Uint16Array(from.buffer, from.byteOffset, PIECE / 2), full = new Uint32Array(to.buffer, to.byteOffset, PIECE / 2);
      // the tensors lie end to end: the data is widened in pieces, whatever tensor they fall in
      for (let done = 0; done < at; done += PIECE) {
        const n = Math.min(PIECE, at - done);
        if (fs.readSync(src, from, 0, n, 8 + headLen + done) !== n) throw new Error('widen: the BF16 file ended early');
        for (let i = 0; i < n / 2; i++) full[i] = half[i] << 16;   // little-endian, as safetensors is
        fs.writeSync(dst, to, 0, 2 * n);
      }
      return { bytes: 8 + head.length + 2 * at };
    } finally {
      fs.closeSync(dst);
    }
  } finally {
    fs.closeSync(src);
  }
}
