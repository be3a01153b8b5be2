// strings/page-math.js - the markup of the page's formulas (QKᵀ, d_k, √d_k) as its strings write
// them: one place for the shared words (web/strings/page.js) and the sections' (web/page/*-strings.js).

export const M = (s) => `<span class="m">${s}</span>`;
export const QKT = M('QK<sup>T</sup>');
export const DK = M('d<sub>k</sub>');
export const SQRT_DK = M('√d<sub>k</sub>');
