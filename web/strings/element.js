// strings/element.js - the words of <attention-heatmap> (web/element/), in Chinese and English.
// Set with textContent or passed to the renderer, which escapes them.

export const zh = {
  htmlLang: 'zh-CN',
  loading: '正在计算注意力…',
  hint: '把鼠标移到格子上，或用 Tab 和方向键逐格查看数值。',
  title: '注意力权重', causal: '注意力权重（因果遮蔽）',
  head: (k, dHead, causal) => `头 ${k} · d_head = ${dHead}${causal ? '（因果遮蔽）' : ''}`,
  headCell: (k, text) => `头 ${k} · ${text}`,
  mhaOut: '输出：各头拼接后乘 W_O 得到的新向量',
  out: '输出：按权重混合 V 得到的新向量', outRows: '每个词', outCols: '维度',
  outCell: (tok, j, v) => `${tok} · 维度 ${j}: ${v}`,
  outDesc: '每一行是这个词的输出向量：用上面的注意力权重把所有词的 Value 加权求和。蓝色为负，红色为正，越接近白色越接近 0。',
  input: '注意力热力图无法显示：输入有误。',
  wasm: '注意力热力图无法显示：这个页面不能运行 WebAssembly。',
  wasmHint: '页面的内容安全策略（CSP）需要在 script-src 里加上 \'wasm-unsafe-eval\'，或者浏览器不支持 WebAssembly。',
  rng: '注意力热力图无法显示：缺少随机投影模块 torch-rng.js。',
  rngHint: '用 x 和 seed 时，要把 web/rng/torch-rng.js 和其余文件放在同一个目录；或者直接给出 q、k（和 v），或 wq、wk、wv（和 wo）。',
  other: '注意力热力图无法显示：出现了意外错误。',
  // model="…" (issue 16)
  modelLoading: '正在加载模型…',
  modelTitle: (layer, head) => `第 ${layer} 层 · 头 ${head}`,
  model: '注意力热力图无法显示：模型文件缺失或损坏。',
  // the hint under a fetch that got no answer; the others come with the model code (strings/model-hints.js)
  modelHint: '从磁盘打开的页面只能用 toy-zh；文件夹要和页面在同一个网站上。',
};

export const en = {
  htmlLang: 'en',
  loading: 'Computing attention…',
  hint: 'Hover over a cell, or use Tab and the arrow keys, to read its value.',
  title: 'Attention weights', causal: 'Attention weights (causal mask)',
  head: (k, dHead, causal) => `head ${k} · d_head = ${dHead}${causal ? ' (causal)' : ''}`,
  headCell: (k, text) => `head ${k} · ${text}`,
  mhaOut: 'Output: the heads concatenated, times W_O',
  out: 'Output: V mixed by the weights', outRows: 'token', outCols: 'dimension',
  outCell: (tok, j, v) => `${tok} · dim ${j}: ${v}`,
  outDesc: 'Each row is the output vector of that token: the Values of all tokens summed with the attention weights above. Blue is negative, red is positive, white is near 0.',
  input: 'The attention heatmap cannot be shown: the input is not valid.',
  wasm: 'The attention heatmap cannot be shown: this page cannot run WebAssembly.',
  wasmHint: 'The page\'s Content-Security-Policy needs \'wasm-unsafe-eval\' in script-src, or the browser has no WebAssembly.',
  rng: 'The attention heatmap cannot be shown: the random-projection module torch-rng.js is missing.',
  rngHint: 'With x and seed, put web/rng/torch-rng.js in the same folder as the other files, or give q and k (and v), or wq, wk, wv (and wo), directly.',
  other: 'The attention heatmap cannot be shown: something unexpected went wrong.',
  // model="…" (issue 16)
  modelLoading: 'Loading the model…',
  modelTitle: (layer, head) => `layer ${layer} · head ${head}`,
  model: 'The attention heatmap cannot be shown: the model\'s files are missing or broken.',
  modelHint: 'A page opened from disk can only use toy-zh; a folder must be on the page\'s own site.',
};

