// model-hints.js - the hints under <attention-heatmap model="…">'s failures to fetch a folder, by
// what went wrong; they load with the model code (web/model/element-support.js), not the embed.
// A fetch that got no answer at all uses strings/element.js's modelHint.
export const MODEL_HINTS = {
  missing: {
    zh: '检查文件夹的地址：它要有 config.json 和 model.safetensors。',
    en: 'Check the folder\'s address: it must hold config.json and model.safetensors.',
  },
  html: {
    zh: '服务器把缺失的文件换成了一个网页（单页应用的回退页）：检查文件是否真的在那个文件夹里。',
    en: 'The server answered a missing file with a web page (a single-page app\'s fallback): check that the file really is in that folder.',
  },
  stall: {
    zh: '服务器停止发送数据，或连接中断了：稍后再试。',
    en: 'The server stopped sending, or the connection broke: try again later.',
  },
};
