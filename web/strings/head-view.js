// strings/head-view.js - the words of the head view (web/heatmap/head-view.js), in Chinese and
// English. Plain text: the renderer escapes it. Token numbers are 1-based, as people count.

export const zh = {
  title: '头视图：谁在看谁',
  desc: (heads, token, side) => `左列是查询（谁在看），右列是键（被看的词）；每条线从一个查询连到它看的键，线越不透明权重越大，颜色区分头（${heads.length ? `头 ${heads.join('、')}` : '没有选中的头'}）。` +
    (token === undefined || token === null ? '' : `现在只显示「${token}」${side === 'query' ? '看向别人' : '被别人看'}的线。`),
  token: (t, i, side) => `${t}（第 ${i + 1} 个词）：只看它${side === 'query' ? '看向别人' : '被别人看'}的线`,
};

export const en = {
  title: 'Head view: who looks at whom',
  desc: (heads, token, side) => `Left: queries (who is looking); right: keys (who is looked at). Each line joins a query to a key it attends to; the more opaque, the larger the weight; colours tell the heads apart (${heads.length ? `heads ${heads.join(', ')}` : 'no head selected'}).` +
    (token === undefined || token === null ? '' : ` Only the lines where "${token}" ${side === 'query' ? 'looks at others' : 'is looked at'} are shown.`),
  token: (t, i, side) => `${t} (token ${i + 1}): show only the lines where it ${side === 'query' ? 'looks at others' : 'is looked at'}`,
};
