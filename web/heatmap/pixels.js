// pixels.js - a matrix as the pixels of a plot of width × height: which cells each pixel stands
// for, how their values are reduced to one, and the packed colours written from a lookup table.
// Pure (typed arrays in, typed arrays out); canvas.js puts the result on a canvas.
//
// The geometry: over a plot of W pixels, column j of m covers x from j·W/m to (j+1)·W/m (rows
// likewise over the height), and pixel x covers [x, x + 1).
// - Fewer cells than pixels (m <= W): a pixel takes the cell under its centre, x + 0.5: cells are
//   blocks of ⌊W/m⌋ or ⌈W/m⌉ pixels (nearest neighbour).
// - More cells than pixels (m > W): a pixel takes every cell it overlaps, ⌊x·m/W⌋ to
//   ⌈(x+1)·m/W⌉ − 1, and reduces them to one value: 'max' (the default: one high cell among
//   millions of zeros still lights its pixel) or 'mean' (the unweighted mean of those cells).
// The two axes are mapped apart (a 1 × 4,096 matrix on 256 × 256 pixels is blocks down, max across).
import { rampAt } from './colour.js';

/**
 * The scale as a lookup table of 256 colours, for drawing millions of pixels: entry k is
 * rampAt(k / 255), RGB bytes at k * 3 .. k * 3 + 2. lutIndex(t) is the entry nearest ramp
 * position t (NaN: 128, the middle), so a pixel is off from colour(v) by at most half a step
 * of the ramp (1/510).
 */
export function colourLut(o) {
  const lut = new Uint8Array(256 * 3);
  for (let k = 0; k < 256; k++) lut.set(rampAt(k / 255, o), k * 3);
  return lut;
}
// (x + 0.5) | 0 is Math.round(x) for 0 < x < 255, and several times faster in V8's hot loops
export const lutIndex = (t) => (t > 0 ? (t < 1 ? (t * 255 + 0.5) | 0 : 255) : t <= 0 ? 0 : 128);

/** For each of `pixels` pixels along an axis of `cells` cells, the first and last cell it stands for. */
export function axisMap(cells, pixels) {
  const lo = new Int32Array(pixels), hi = new Int32Array(pixels);
  for (let p = 0; p < pixels; p++) {
    if (cells <= pixels) {
      lo[p] = hi[p] = Math.floor(((2 * p + 1) * cells) / (2 * pixels));      // the cell under the centre
    } else {
      lo[p] = Math.floor((p * cells) / pixels);                              // every cell it overlaps
      hi[p] = Math.floor(((p + 1) * cells - 1) / pixels);
    }
  }
  return { lo, hi, blocks: cells <= pixels };
}

/**
 * Fill `out` (a Uint32Array of width × height packed colours, row-major) from the rows × cols
 * values: each pixel gets lut32[toIndex(v)] of its cells' reduced value v (see the top of the file).
 * Works one pixel row at a time, so besides `out` it holds two rows of `width` numbers.
 */
export function fillPixels(out, values, rows, cols, width, height, { reduce = 'max', toIndex, lut32 }) {
  const C = axisMap(cols, width), R = axisMap(rows, height);
  if (C.blocks && R.blocks) return fillBlocks(out, values, cols, width, height, C, R, toIndex, lut32);
  const line = new Float64Array(width), acc = new Float64Array(width);
  const mean = reduce === 'mean';
  let lineRow = -1;
  for (let y = 0; y < height; y++) {
    const r0 = R.lo[y], r1 = R.hi[y];
    for (let i = r0; i <= r1; i++) {
      // a cell row shared with the pixel row above (blocks, or the row on a boundary) is reduced once
      if (i !== lineRow) { reduceRow(line, values, i * cols, C, mean); lineRow = i; }
      if (i === r0) acc.set(line);
      else if (mean) for (let x = 0; x < width; x++) acc[x] += line[x];
      else for (let x = 0; x < width; x++) { if (line[x] > acc[x]) acc[x] = line[x]; }
    }
    const k = mean ? r1 - r0 + 1 : 1, base = y * width;
    for (let x = 0; x < width; x++) out[base + x] = lut32[toIndex(acc[x] / k)];
  }
  return out;
}

// One cell per pixel on both axes (nothing to reduce): each pixel row straight from its cell row,
// or a copy of the row above when both show the same cells.
function fillBlocks(out, values, cols, width, height, C, R, toIndex, lut32) {
  for (let y = 0; y < height; y++) {
    const base = y * width, i = R.lo[y];
    if (y > 0 && i === R.lo[y - 1]) { out.copyWithin(base, base - width, base); continue; }
    const row = i * cols, lo = C.lo;
    for (let x = 0; x < width; x++) out[base + x] = lut32[toIndex(values[row + lo[x]])];
  }
  return out;
}

// line[x] = the max (or mean) of values[base + lo[x] .. base + hi[x]]
function reduceRow(line, values, base, { lo, hi, blocks }, mean) {
  if (blocks) {                                               // one cell per pixel
    for (let x = 0; x < line.length; x++) line[x] = values[base + lo[x]];
    return;
  }
  for (let x = 0; x < line.length; x++) {
    const j0 = base + lo[x], j1 = base + hi[x];
    let v = values[j0];
    if (mean) {
      for (let j = j0 + 1; j <= j1; j++) v += values[j];
      v /= j1 - j0 + 1;
    } else {
      for (let j = j0 + 1; j <= j1; j++) if (values[j] > v) v = values[j];
    }
    line[x] = v;
  }
}

/**
 * The lookup table (LUT_SIZE colours, RGB bytes; colour.js colourLut) as packed opaque pixels for a
 * Uint32Array over ImageData bytes: R, G, B, A in memory whatever the platform's byte order.
 */
export function packLut(lut) {
  const little = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  const out = new Uint32Array(lut.length / 3);
  for (let k = 0; k < out.length; k++) {
    const r = lut[3 * k], g = lut[3 * k + 1], b = lut[3 * k + 2];
    out[k] = little ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
  }
  return out;
}
