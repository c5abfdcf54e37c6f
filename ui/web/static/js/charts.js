// Hand-written SVG charts, sized by viewBox so they scale with the page.
// Each has a <title> (its accessible name), a <desc> with the numbers in
// words, and a <title> per mark for the exact values on hover.

import { s } from './dom.js';
import * as fmt from './format.js';

// niceCeil rounds up to 1, 2 or 5 times a power of ten, for axis maxima.
function niceCeil(v) {
  if (!(v > 0)) {
    return 1;
  }
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) {
    if (v <= m * p) {
      return m * p;
    }
  }
  return 10 * p;
}

function shortNumber(v) {
  return Number(v.toPrecision(3)).toString();
}

function frame(testid, viewW, viewH, title, desc) {
  return s('svg', {
    class: `chart ${testid}`, viewBox: `0 0 ${viewW} ${viewH}`, role: 'img', testid,
    preserveAspectRatio: 'xMinYMin meet',
  }, s('title', null, title), s('desc', null, desc));
}

function bucketName(iso, bucket) {
  if (Number.isNaN(fmt.timeValue(iso))) {
    return String(iso || '');
  }
  const t = fmt.time(iso);
  return bucket === 'hour' ? `${t.slice(5, 10)} ${t.slice(11, 16)}` : t.slice(0, 10);
}

// timeseries draws calls per bucket as bars (errors as the red part of
// each bar) and the known cost per bucket as a line on a second axis.
export function timeseries(points, bucket) {
  const pts = (points || []).slice().sort((a, b) => fmt.timeValue(a.t) - fmt.timeValue(b.t));
  const W = 800;
  const H = 260;
  const m = { l: 52, r: 70, t: 16, b: 40 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const calls = pts.map((p) => Number(p.calls) || 0);
  const errors = pts.map((p) => Number(p.errors) || 0);
  const costs = pts.map((p) => (p.cost_usd === null || p.cost_usd === undefined || p.cost_usd === '' ? null : Number(p.cost_usd)));
  const totalCalls = calls.reduce((a, b) => a + b, 0);
  const totalErrors = errors.reduce((a, b) => a + b, 0);
  const unknown = pts.reduce((a, p) => a + (Number(p.cost_unknown_calls) || 0), 0);
  const maxCalls = niceCeil(Math.max(0, ...calls));
  const knownCosts = costs.filter((c) => c !== null && Number.isFinite(c));
  const maxCost = niceCeil(Math.max(0, ...knownCosts));
  const svg = frame('chart-timeseries', W, H, `Calls and cost per ${bucket}`,
    `${totalCalls} calls, ${totalErrors} errors in ${pts.length} ${bucket} buckets; highest cost in one bucket $${shortNumber(Math.max(0, ...knownCosts))}` +
    (unknown > 0 ? `; ${unknown} calls with unknown cost are not in the cost line` : ''));
  const y = (v) => m.t + ph - (v / maxCalls) * ph;
  const yc = (v) => m.t + ph - (v / maxCost) * ph;
  for (const f of [0, 0.5, 1]) {
    const gy = m.t + ph - f * ph;
    svg.append(
      s('line', { class: 'grid-line', x1: m.l, x2: m.l + pw, y1: gy, y2: gy }),
      s('text', { class: 'axis-label', x: m.l - 6, y: gy + 4, 'text-anchor': 'end' }, shortNumber(f * maxCalls)),
      s('text', { class: 'axis-label axis-cost', x: m.l + pw + 6, y: gy + 4 }, `$${shortNumber(f * maxCost)}`));
  }
  svg.append(
    s('text', { class: 'axis-title', x: 4, y: 12 }, 'calls'),
    s('text', { class: 'axis-title axis-cost', x: W - 4, y: 12, 'text-anchor': 'end' }, 'cost (USD)'));
  const band = pw / Math.max(1, pts.length);
  const barW = Math.max(1, band * 0.7);
  const labelEvery = Math.max(1, Math.ceil(pts.length / 8));
  pts.forEach((p, i) => {
    const x = m.l + i * band + (band - barW) / 2;
    const c = calls[i];
    const e = Math.min(errors[i], c);
    const costText = fmt.totalCost(p.cost_usd, Number(p.cost_unknown_calls) || 0);
    const g = s('g', { class: 'bar-group' },
      s('title', null, `${fmt.time(p.t)}: ${c} calls, ${errors[i]} errors, cost ${costText}`),
      s('rect', { class: 'bar-calls', x, width: barW, y: y(c), height: Math.max(0, y(0) - y(c)) }));
    if (e > 0) {
      g.append(s('rect', { class: 'bar-errors', x, width: barW, y: y(e), height: Math.max(0, y(0) - y(e)) }));
    }
    svg.append(g);
    if (i % labelEvery === 0) {
      svg.append(s('text', { class: 'axis-label', x: m.l + i * band + band / 2, y: H - m.b + 16, 'text-anchor': 'middle' }, bucketName(p.t, bucket)));
    }
  });
  // The cost line breaks where a bucket's cost is unknown.
  let d = '';
  let pen = false;
  costs.forEach((c, i) => {
    if (c === null || !Number.isFinite(c)) {
      pen = false;
      return;
    }
    d += `${pen ? 'L' : 'M'}${(m.l + i * band + band / 2).toFixed(1)},${yc(c).toFixed(1)}`;
    pen = true;
  });
  if (d) {
    svg.append(s('path', { class: 'line-cost', d }));
  }
  costs.forEach((c, i) => {
    if (c === null || !Number.isFinite(c)) {
      return;
    }
    const partial = Number(pts[i].cost_unknown_calls) > 0;
    svg.append(s('circle', { class: partial ? 'dot-cost dot-partial' : 'dot-cost', cx: m.l + i * band + band / 2, cy: yc(c), r: 3 },
      s('title', null, `${fmt.time(pts[i].t)}: cost ${fmt.totalCost(pts[i].cost_usd, Number(pts[i].cost_unknown_calls) || 0)}`)));
  });
  svg.append(s('line', { class: 'axis-line', x1: m.l, x2: m.l + pw, y1: m.t + ph, y2: m.t + ph }));
  return svg;
}

// latency draws the latency histogram with markers at p50, p95 and p99.
export function latency(hist) {
  const buckets = fmt.histogram(hist.buckets);
  const W = 520;
  const H = 260;
  const m = { l: 40, r: 12, t: 52, b: 40 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const maxCount = niceCeil(Math.max(0, ...buckets.map((b) => b.count)));
  const pcts = [['p50', hist.p50_ms], ['p95', hist.p95_ms], ['p99', hist.p99_ms]];
  const svg = frame('chart-latency', W, H, 'Latency distribution',
    `${fmt.count(hist.calls)} calls; ${pcts.map(([name, v]) => `${name} ${fmt.ms(v)}`).join(', ')}`);
  const band = pw / Math.max(1, buckets.length);
  const barW = Math.max(1, band * 0.8);
  const y = (v) => m.t + ph - (v / maxCount) * ph;
  for (const f of [0, 0.5, 1]) {
    const gy = m.t + ph - f * ph;
    svg.append(
      s('line', { class: 'grid-line', x1: m.l, x2: m.l + pw, y1: gy, y2: gy }),
      s('text', { class: 'axis-label', x: m.l - 6, y: gy + 4, 'text-anchor': 'end' }, shortNumber(f * maxCount)));
  }
  svg.append(
    s('text', { class: 'axis-title', x: 4, y: 12 }, 'calls'),
    s('text', { class: 'axis-title', x: W - 4, y: H - 4, 'text-anchor': 'end' }, 'latency (ms, bucket upper bound)'));
  buckets.forEach((b, i) => {
    const x = m.l + i * band + (band - barW) / 2;
    const label = fmt.bucketLabel(buckets, i);
    svg.append(s('g', { class: 'bar-group' },
      s('title', null, `${label}: ${b.count} calls`),
      s('rect', { class: 'bar-latency', x, width: barW, y: y(b.count), height: Math.max(0, y(0) - y(b.count)) }),
      b.count > 0 ? s('text', { class: 'bar-value', x: x + barW / 2, y: y(b.count) - 3, 'text-anchor': 'middle' }, String(b.count)) : null,
      s('text', { class: 'axis-label', x: x + barW / 2, y: H - m.b + 16, 'text-anchor': 'middle' }, label.replace(' ms', ''))));
  });
  // A percentile sits in the bucket holding it, placed by linear
  // interpolation between the bucket's bounds.
  pcts.forEach(([name, v], row) => {
    if (v === null || v === undefined || !Number.isFinite(Number(v)) || buckets.length === 0) {
      return;
    }
    const val = Number(v);
    let i = buckets.findIndex((b) => b.le !== null && val <= b.le);
    let frac = 0.5;
    if (i < 0) {
      i = buckets.length - 1;
    } else {
      const lower = i > 0 && buckets[i - 1].le !== null ? buckets[i - 1].le : 0;
      frac = buckets[i].le > lower ? Math.min(1, Math.max(0, (val - lower) / (buckets[i].le - lower))) : 1;
    }
    const x = m.l + i * band + frac * band;
    const ty = 12 + row * 13;
    // Labels near the right edge hang to the left of their line.
    const left = x > W - 110;
    svg.append(s('g', { class: `pct pct-${name}`, testid: `latency-marker-${name}` },
      s('title', null, `${name}: ${fmt.ms(val)}`),
      s('line', { class: 'pct-line', x1: x, x2: x, y1: ty + 3, y2: m.t + ph }),
      s('text', { class: 'pct-label', x: left ? x - 3 : x + 3, y: ty + 8, 'text-anchor': left ? 'end' : 'start' }, `${name} ${fmt.ms(val)}`)));
  });
  svg.append(s('line', { class: 'axis-line', x1: m.l, x2: m.l + pw, y1: m.t + ph, y2: m.t + ph }));
  return svg;
}

const KINDS = ['llm', 'db', 'retrieval', 'request', 'queue', 'worker'];
const MAX_TIMELINE_ROWS = 500;

// timeline draws the spans of a trace as bars on a shared time axis,
// nested under their parents; LLM calls link to their cards.
export function timeline(spans) {
  const all = (spans || []).slice().sort((a, b) => (Number(a.offset_ms) || 0) - (Number(b.offset_ms) || 0));
  const rows = all.slice(0, MAX_TIMELINE_ROWS);
  const byId = new Map(all.map((sp) => [sp.span_id, sp]));
  const depthOf = (sp) => {
    let d = 0;
    let cur = sp;
    const seen = new Set();
    while (cur && cur.parent_span_id && byId.has(cur.parent_span_id) && !seen.has(cur.parent_span_id) && d < 12) {
      seen.add(cur.parent_span_id);
      cur = byId.get(cur.parent_span_id);
      d++;
    }
    return d;
  };
  const total = Math.max(1, ...all.map((sp) => (Number(sp.offset_ms) || 0) + (Number(sp.duration_ms) || 0)));
  const W = 1000;
  const rowH = 20;
  const top = 26;
  const labelW = 300;
  const pw = W - labelW - 70;
  const H = top + rows.length * rowH + 6;
  const llmCount = all.filter((sp) => sp.kind === 'llm').length;
  const svg = frame('timeline-chart', W, H, 'Trace timeline',
    `${all.length} spans over ${fmt.ms(total)}, ${llmCount} of them LLM calls`);
  const x = (v) => labelW + (v / total) * pw;
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(
      s('line', { class: 'grid-line', x1: x(f * total), x2: x(f * total), y1: top - 6, y2: H }),
      s('text', { class: 'axis-label', x: x(f * total), y: 12, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' }, fmt.ms(f * total)));
  }
  rows.forEach((sp, i) => {
    const kind = KINDS.includes(sp.kind) ? sp.kind : 'other';
    const depth = depthOf(sp);
    const off = Number(sp.offset_ms) || 0;
    const dur = Number(sp.duration_ms) || 0;
    const yTop = top + i * rowH;
    const name = sp.name || sp.kind || 'span';
    const maxChars = Math.max(8, Math.floor((labelW - 12 - depth * 10) / 6.6));
    const label = name.length > maxChars ? `${name.slice(0, maxChars - 1)}…` : name;
    const x0 = x(off);
    const w = Math.max(2, x(off + dur) - x0);
    const durLabel = fmt.ms(dur);
    const after = x0 + w + 4 + durLabel.length * 6.2 < W;
    const g = s('g', { class: `tl-row tl-${kind}${sp.status === 'error' ? ' tl-error' : ''}`, testid: 'timeline-row' },
      s('title', null, `${name}${sp.detail ? ` [${sp.detail}]` : ''} (${sp.kind || 'span'}${sp.service_name ? `, ${sp.service_name}` : ''}): starts +${fmt.ms(off)}, takes ${durLabel}, status ${sp.status || 'unset'}`),
      s('text', { class: 'tl-label', x: 6 + depth * 10, y: yTop + 14 }, label),
      s('rect', { class: 'tl-bar', x: x0, y: yTop + 4, width: w, height: rowH - 8, rx: 2 }),
      s('text', { class: 'tl-dur', x: after ? x0 + w + 4 : x0 - 4, y: yTop + 14, 'text-anchor': after ? 'start' : 'end' }, durLabel));
    svg.append(kind === 'llm' && sp.span_id ? s('a', { href: `#call-${sp.span_id}` }, g) : g);
  });
  return { svg, truncated: all.length - rows.length };
}
