// page-hub-strings.js - the words of "load from Hugging Face" (web/page/page-hub.js, issue 23), in
// Chinese (default) and English: T.models.hub once page-strings.js has merged them.

export const zh = { models: { hub: {
    label: '或者从 Hugging Face 加载（输入模型 id）',
    check: '查看大小',
    go: '下载并加载',
    pick: '这个仓库有多个 GGUF 文件（不同的量化），选一个：',
    cancel: '取消',
    noId: '请输入模型 id，例如 Qwen/Qwen2.5-0.5B。',
    checking: (id) => `正在向 Hugging Face 查询 ${id} 的文件……`,
    ask: (id, size, n) => `${id}：要下载 ${n} 个文件，共 ${size}。下载后保存在浏览器里，下次不用联网。`,
    progress: (file, read, total) => `正在下载 ${file}：${read} / ${total}`,
    cancelled: '已取消下载。',
    failed: (m) => `没能从 Hugging Face 加载：${m}`,
    // why (page-hub.js, hubCause); the loader's English words follow in a folded <details>
    causes: {
      offline: '连不上 Hugging Face（没有网络，或者网络拦住了它）。',
      slow: '网络太慢，或者连接中断了。',
      gated: '这个模型需要登录或同意许可才能下载（gated 或私有）。',
      notFound: 'Hugging Face 上没有这个模型（或者没有它需要的文件）。请检查模型 id 的拼写。',
      server: 'Hugging Face 的服务器返回了错误。',
      badId: '模型 id 的格式不对，应当像 Qwen/Qwen2.5-0.5B 这样。',
      unknown: '出错了。',
    },
    cachedTitle: '已保存在这个浏览器里的模型（加载时不用联网）：',
    delete: '删除',
    deleteLabel: (repo) => `从浏览器里删除 ${repo}`,
} } };

export const en = { models: { hub: {
    label: 'Or load from Hugging Face (a model id)',
    check: 'Check size',
    go: 'Download and load',
    pick: 'This repo holds several GGUF files (quantizations); pick one:',
    cancel: 'Cancel',
    noId: 'Type a model id, such as Qwen/Qwen2.5-0.5B.',
    checking: (id) => `Asking Hugging Face for ${id}'s files…`,
    ask: (id, size, n) => `${id}: ${n} files to download, ${size} in all. They stay in this browser: the next visit needs no network.`,
    progress: (file, read, total) => `Downloading ${file}: ${read} of ${total}`,
    cancelled: 'Download cancelled.',
    failed: (m) => `Could not load from Hugging Face: ${m}`,
    causes: {
      offline: 'Hugging Face cannot be reached (no network, or the network blocks it).',
      slow: 'The network is too slow, or the connection broke.',
      gated: 'This model needs a login or an accepted license to download (gated or private).',
      notFound: 'Hugging Face has no such model (or not the files it needs). Check the model id\'s spelling.',
      server: 'Hugging Face\'s server answered with an error.',
      badId: 'The model id is not in the right form: it looks like Qwen/Qwen2.5-0.5B.',
      unknown: 'Something went wrong.',
    },
    cachedTitle: 'Models kept in this browser (they load without the network):',
    delete: 'Delete',
    deleteLabel: (repo) => `Delete ${repo} from this browser`,
} } };
