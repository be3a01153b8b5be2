// golden-gguf.js - the golden Qwen2 checkpoint (tests/golden/llama/qwen2-bf16, PyTorch's numbers
// in its expected.json) as llama.cpp's convert_hf_to_gguf.py writes it: arch qwen2 (no q/k
// permutation), llama.cpp's tensor names, the tied lm_head left out. For the tests that load a
// GGUF repo by name (tests/unit/hub-gguf.test.js, tests/browser/hub.test.js).
//
//   import { GOLDEN_QWEN2, goldenGguf } from '../golden-gguf.js';   goldenGguf() -> Buffer
import fs from 'node:fs';
import path from 'node:path';
import { parseSafetensors } from '../web/model/load/safetensors.js';
import { ggufMetadata, ggufName } from '../scripts/gguf-writer.js';
import { writeGguf } from './gguf-writer.js';
import { root } from './helpers.js';

export const GOLDEN_QWEN2 = path.join(root, 'tests/golden/llama/qwen2-bf16');

export function goldenGguf() {
  const c = JSON.parse(fs.readFileSync(path.join(GOLDEN_QWEN2, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(fs.readFileSync(path.join(GOLDEN_QWEN2, 'model.safetensors')));
  const tensors = [];
  for (const [name, info] of parseSafetensors(bytes).tensors) {
    if (name === 'lm_head.weight' && c.tie_word_embeddings) continue;
    tensors.push({ name: ggufName(name), shape: info.shape, type: info.dtype, data: bytes.slice(info.begin, info.end) });
  }
  return Buffer.from(writeGguf({ metadata: ggufMetadata('qwen2', c), tensors }).bytes);
}
