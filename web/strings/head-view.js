// strings/head-view.js - the words of the head view (web/heatmap/head-view.js), in Chinese and
// English. Plain text: the renderer escapes it. Token numbers are 1-based, as people count.

export const zh = {
  title: '头视图：谁在看谁',
  desc: (heads, token, side) => `左列是查询（谁在看），右列是键（被看的词）；每条线从一个查询连到它看的键，线越不透明权重越大，颜色区分头（${heads.length ? `头 ${heads.join('、')}` : '没有选中的头'}）。` +
    (token === undefined || token === null ? '' : `现在只显示「${token}」${side === 'query' ? '看向别人' : '被别人看'}的线。`),
  token: (t, i, side) => `${t}（第 ${i + 1} 个词）：只看它${side === 'query' ? '看向别人' : '被别人看'}的线`,
  // the page's head view section (web/page/page-headview.js); layers and heads counted from 1
  page: {
    title: '头视图：每个头的连线',
    hint: '左边的词看向右边的词，线越深注意力越大，每种颜色是一个头。把鼠标放在一个词上（或用 Tab 选中它，再用方向键移动），只看它的线；点头的按钮可以隐藏或显示这个头。',
    layer: '层',
    layerOption: (l) => `第 ${l + 1} 层`,
    heads: '显示哪些头',
    headButton: (k, kv) => `头 ${k + 1}${kv === null ? '' : `（kv ${kv + 1}）`}`,
    save: '保存为 SVG',
    svgTitle: (name, l) => `${name ? `${name}：` : ''}第 ${l + 1} 层的头视图`,   // (a folder without a name: none)
  },
};

export const en = {
  title: 'Head view: who looks at whom',
  desc: (heads, token, side) => `Left: queries (who is looking); right: keys (who is looked at). Each line joins a query to a key it attends to; the more opaque, the larger the weight; colours tell the heads apart (${heads.length ? `heads ${heads.join(', ')}` : 'no head selected'}).` +
    (token === undefined || token === null ? '' : ` Only the lines where "${token}" ${side === 'query' ? 'looks at others' : 'is looked at'} are shown.`),
  token: (t, i, side) => `${t} (token ${i + 1}): show only the lines where it ${side === 'query' ? 'looks at others' : 'is looked at'}`,
  page: {
    title: 'Head view: every head\'s lines',
    hint: 'Tokens on the left look at tokens on the right; the darker the line, the more attention; one colour per head. Hover a token (or Tab to it, then use the arrow keys) to see its lines alone; the head buttons hide or show a head.',
    layer: 'Layer',
    layerOption: (l) => `layer ${l + 1}`,
    heads: 'Heads shown',
    headButton: (k, kv) => `head ${k + 1}${kv === null ? '' : ` (kv ${kv + 1})`}`,
    save: 'Save as SVG',
    svgTitle: (name, l) => `${name ? `${name}: head` : 'Head'} view of layer ${l + 1}`,
  },
};
