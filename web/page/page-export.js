// page-export.js - the main heatmap as a file (SVG or PNG, in the theme the reader picked) and
// copies to the clipboard that say so for a while.
//
//   download(blob, name)
//   standaloneSvg(heatmap, theme)          // heatmap: { ctx, options } as page-heatmaps.js drew it
//   await pngOf(svg)                       // a Blob
//   const copyText = createCopier(getT)    // copyText(text, okMsg, msgEl)
import { renderHeatmap } from '../heatmap/heatmap.js';
import { h } from './page-dom.js';

const COPY_RESET_MS = 3000; // "copied" and the like go back after this

export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

// label colour and background of an exported file: light unless the reader picks dark (page.css's themes)
const EXPORT_THEMES = { light: ['#1f2328', '#ffffff'], dark: ['#e6edf3', '#0d1117'] };

/**
 * A heatmap as a file, in the given theme. The renderer's standalone SVG follows the viewer's
 * prefers-color-scheme, so a dark-mode reader would export a dark picture without choosing it:
 * the file wraps it, unchanged, in an <svg> whose style fixes the colours.
 * (A theme option of the renderer, web/heatmap/draw.js, would make the wrapper unnecessary.)
 */
export function standaloneSvg({ ctx, options }, theme) {
  const svg = renderHeatmap(ctx.weights, { ...options, standalone: true, idPrefix: 'attnmap' });
  const [, W, H] = /width="(\d+)" height="(\d+)"/.exec(svg);
  const [color, bg] = EXPORT_THEMES[theme];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">` +
    `<style>svg.attnmap{color:${color}!important}.attnmap .attnmap-bg{fill:${bg}!important}</style>\n${svg}</svg>\n`;
}

/** An SVG string drawn at twice its size into a PNG. */
export async function pngOf(svg) {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const W = Number(doc.documentElement.getAttribute('width'));
  const H = Number(doc.documentElement.getAttribute('height'));
  const img = new Image();
  // a data: URL, not fetch: this works from file:// too, and leaves the canvas untainted
  img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = W * 2;
  canvas.height = H * 2;
  const g = canvas.getContext('2d');
  g.drawImage(img, 0, 0, W * 2, H * 2);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('canvas.toBlob gave nothing'))), 'image/png'));
}

/** Copy, and say so for COPY_RESET_MS: then a button reads its own label again, a message is empty. */
export function createCopier(getT) {
  const flashTimers = new WeakMap();
  return async function copyText(text, okMsg, msgEl) {
    let said;
    try {
      await navigator.clipboard.writeText(text);
      said = okMsg;
    } catch {
      said = getT().copyFailed;
    }
    msgEl.textContent = said;
    clearTimeout(flashTimers.get(msgEl));
    flashTimers.set(msgEl, setTimeout(() => {
      msgEl.textContent = msgEl.dataset.i18n ? getT()[msgEl.dataset.i18n] : '';
    }, COPY_RESET_MS));
  };
}

/**
 * The main heatmap's two exports, named after its seed, d_k, mask and theme. env: { $, getModel(),
 * getMap(): the main heatmap as drawn }; the theme is the #export-dark box's.
 */
export function createMainExport({ $, getModel, getMap }) {
  const theme = () => ($('export-dark').checked ? 'dark' : 'light');
  const name = (ext) => {
    const m = getModel();
    return `attention-weights-seed${m.seed}-dk${m.dk}${m.causal ? '-causal' : ''}${theme() === 'dark' ? '-dark' : ''}.${ext}`;
  };
  return {
    svg: () => download(new Blob([standaloneSvg(getMap(), theme())], { type: 'image/svg+xml' }), name('svg')),
    png: async () => download(await pngOf(standaloneSvg(getMap(), theme())), name('png')),
  };
}
