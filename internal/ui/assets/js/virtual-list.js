// VirtualList shows a list of any length by keeping in the DOM only the
// rows in sight (and a few either side), re-using their elements as the
// list scrolls: 100,000 allocations cost what 40 do. Rows have one fixed
// height; the spacer below them gives the scrollbar the whole length.
import { h } from './dom.js';

const ROW = 28;        // px, one row
const OVERSCAN = 8;    // rows drawn beyond each edge

export class VirtualList {
  // columns: [{label, width (a grid track), text(row) -> string, cls(row) ->
  // the cell's class}], or cell(row) -> Node for the rare cell that needs
  // elements (text is what keeps scrolling cheap: no element is made).
  // onOpen(row) is called when a row is clicked.
  constructor(columns, { height = 'calc(100vh - 230px)', onOpen, empty = 'nothing to show' } = {}) {
    this.columns = columns;
    this.rows = [];
    this.onOpen = onOpen;
    this.empty = empty;
    const tracks = columns.map((c) => c.width || '1fr').join(' ');
    this.tracks = tracks;
    this.el = h('div', { class: 'vlist', style: { height }, role: 'grid' });
    this.el.vlist = this; // for the speed test: it times draw() per scroll step
    this.head = h('div', { class: 'vhead', style: { gridTemplateColumns: tracks, height: `${ROW}px` } },
      columns.map((c) => h('div', {}, c.label)));
    this.spacer = h('div', { style: { position: 'relative' } });
    this.note = h('div', { class: 'muted', style: { padding: '10px', position: 'absolute', top: `${ROW}px` } });
    this.el.append(this.head, this.spacer, this.note);
    this.pool = [];
    this.frame = 0;
    this.el.addEventListener('scroll', () => this.schedule(), { passive: true });
    this.el.addEventListener('click', (e) => {
      const row = e.target.closest('.vrow');
      if (row && this.onOpen && !e.target.closest('a')) {
        const r = this.rows[Number(row.dataset.i)];
        if (r) this.onOpen(r);
      }
    });
    new ResizeObserver(() => this.schedule()).observe(this.el);
  }

  setRows(rows) {
    this.rows = rows;
    this.spacer.style.height = `${rows.length * ROW}px`;
    this.note.textContent = rows.length ? '' : this.empty;
    this.draw();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  // rowElement returns the pooled element that shows row i: row i always
  // lands on element i mod the pool's size, so a scroll of a few rows
  // rewrites only the rows that came into sight.
  rowElement(i, size) {
    while (this.pool.length < size) {
      const cells = this.columns.map(() => h('div'));
      const el = h('div', { class: 'vrow', style: { gridTemplateColumns: this.tracks, height: `${ROW}px` } }, cells);
      el.cells = cells;
      this.spacer.append(el);
      this.pool.push(el);
    }
    return this.pool[i % size];
  }

  // draw fills the pooled rows with the rows in sight.
  draw() {
    const top = this.el.scrollTop, view = this.el.clientHeight || 600;
    const size = Math.ceil(view / ROW) + 2 * OVERSCAN + 2;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(this.rows.length, first + size);
    const pass = (this.pass = (this.pass || 0) + 1);
    for (let i = first; i < last; i++) {
      const el = this.rowElement(i, size), row = this.rows[i];
      el.pass = pass;
      if (el.index === i && el.row === row) { if (el.hidden) el.hidden = false; continue; }
      el.index = i;
      el.row = row;
      el.dataset.i = i;
      el.style.transform = `translateY(${i * ROW}px)`;
      el.hidden = false;
      for (let j = 0; j < this.columns.length; j++) {
        const c = this.columns[j], cell = el.cells[j];
        if (c.cell) { cell.replaceChildren(c.cell(row)); continue; }
        const text = c.text(row);
        if (cell.textContent !== text) cell.textContent = text;
        if (c.cls) { const cls = c.cls(row); if (cell.className !== cls) cell.className = cls; }
      }
    }
    for (const el of this.pool) {
      if (el.pass !== pass && !el.hidden) { el.hidden = true; el.row = null; el.index = -1; }
    }
  }
}
