// Heatmap draws nodes as small squares on one canvas, in labelled blocks
// (the children of the topology level in view: regions, zones, racks),
// coloured by a value of 0..1 per node. Canvas, not DOM: 10,000 nodes are
// 10,000 fillRects, drawn in a few milliseconds. It keeps the layout to
// answer which node or block lies under the pointer.

const LABEL = 16, PAD = 6, GAP = 1;

// ramp maps 0..1 to a colour: pale green, yellow, red.
const STOPS = [[0, [231, 243, 233]], [0.5, [242, 197, 61]], [0.85, [226, 120, 52]], [1, [194, 59, 59]]];
export function ramp(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '#cfd3da';
  v = Math.max(0, Math.min(1, v));
  for (let i = 1; i < STOPS.length; i++) {
    if (v <= STOPS[i][0]) {
      const [a, ca] = STOPS[i - 1], [b, cb] = STOPS[i];
      const t = (v - a) / (b - a);
      return `rgb(${ca.map((c, k) => Math.round(c + (cb[k] - c) * t)).join(',')})`;
    }
  }
  return 'rgb(194,59,59)';
}
export const rampCSS = `linear-gradient(90deg, ${STOPS.map(([s, c]) => `rgb(${c.join(',')}) ${s * 100}%`).join(', ')})`;

export class Heatmap {
  constructor(canvas) {
    this.canvas = canvas;
    this.blocks = [];
  }

  // draw lays out blocks [{key, label, nodes}] at the canvas's width and
  // paints each node with color(node); returns the milliseconds it took.
  draw(blocks, color, marker) {
    const t0 = performance.now();
    const width = Math.max(300, this.canvas.clientWidth || this.canvas.parentElement.clientWidth || 1000);
    const total = blocks.reduce((s, b) => s + b.nodes.length, 0);
    // The largest square that keeps the whole map within about a screen.
    const budget = Math.max(400, window.innerHeight * 0.72);
    let size = 3;
    for (const s of [22, 16, 12, 9, 7, 5, 4, 3]) {
      if (this.layout(blocks, width, s).height <= budget || s === 3) { size = s; break; }
    }
    const { placed, height } = this.layout(blocks, width, size);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    for (const b of placed) {
      ctx.fillStyle = '#f4f6f9';
      ctx.fillRect(b.x, b.y, b.w, b.h);
      ctx.fillStyle = '#4a5366';
      ctx.fillText(`${b.label} · ${b.nodes.length}`, b.x + 3, b.y + 2, b.w - 6);
      const step = size + GAP;
      for (let i = 0; i < b.nodes.length; i++) {
        const n = b.nodes[i];
        const x = b.x + 3 + (i % b.cols) * step, y = b.y + LABEL + Math.floor(i / b.cols) * step;
        ctx.fillStyle = color(n);
        ctx.fillRect(x, y, size, size);
        const m = marker?.(n);
        if (m && size >= 5) {
          ctx.strokeStyle = m;
          ctx.lineWidth = 1;
          ctx.strokeRect(x + 0.5, y + 0.5, size - 1, size - 1);
        }
      }
    }
    this.blocks = placed;
    this.size = size;
    const ms = performance.now() - t0;
    this.canvas.dataset.nodes = String(total);
    this.canvas.dataset.renderMs = ms.toFixed(1);
    return ms;
  }

  // layout places the blocks left to right, wrapping at width, each a grid
  // of squares near twice as wide as tall.
  layout(blocks, width, size) {
    const step = size + GAP;
    const placed = [];
    let x = 0, y = 0, rowH = 0;
    for (const b of blocks) {
      const n = Math.max(1, b.nodes.length);
      const maxCols = Math.max(1, Math.floor((width - 6) / step));
      let cols = Math.min(maxCols, Math.max(Math.ceil(Math.sqrt(n * 2)), Math.min(n, 8)));
      const rows = Math.ceil(n / cols);
      const w = Math.max(cols * step + 6, 90), hgt = LABEL + rows * step + 4;
      if (x > 0 && x + w > width) { x = 0; y += rowH + PAD; rowH = 0; }
      placed.push({ ...b, x, y, w: Math.min(w, width), h: hgt, cols });
      x += w + PAD;
      rowH = Math.max(rowH, hgt);
    }
    return { placed, height: y + rowH + 2 };
  }

  // hit returns {block, node} under canvas point (px, py), node null over a
  // block's label or padding.
  hit(px, py) {
    for (const b of this.blocks) {
      if (px < b.x || px > b.x + b.w || py < b.y || py > b.y + b.h) continue;
      const step = this.size + GAP;
      const col = Math.floor((px - b.x - 3) / step), row = Math.floor((py - b.y - LABEL) / step);
      const i = row * b.cols + col;
      const node = py >= b.y + LABEL && col >= 0 && col < b.cols && i >= 0 && i < b.nodes.length ? b.nodes[i] : null;
      return { block: b, node };
    }
    return null;
  }
}
