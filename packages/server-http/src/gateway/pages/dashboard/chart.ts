/**
 * @module dashboard/chart
 * Line charts with axes: a value scale rounded to 1, 2 or 5 times a power of
 * ten with labelled ticks, a time axis with clock labels, and a legend. Drawn
 * as SVG (text nodes, never markup from the API) with a fixed aspect, so the
 * labels are not stretched. `data-max` carries the scale's top for tests.
 */
export const CHART_SCRIPT = `
const COLORS = ['#0969da', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#1b7c83', '#953800'];
const SVG = 'http://www.w3.org/2000/svg';
const CHART = { width: 480, height: 200, left: 64, right: 14, top: 12, bottom: 30 };
function svgEl(tag, attributes, content) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (content != null) node.textContent = content;
  return node;
}
/** The smallest 1, 2 or 5 times a power of ten at or above value (1 for nothing). */
function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}
function formatValue(value, unit) {
  const rounded = value >= 100 ? Math.round(value) : value >= 10 ? Math.round(value * 10) / 10 : Math.round(value * 100) / 100;
  const short = rounded >= 1e6 ? (rounded / 1e6) + 'M' : rounded >= 1e4 ? (rounded / 1e3) + 'k' : String(rounded);
  return unit ? short + ' ' + unit : short;
}
function clock(epochMs, withSeconds) {
  const d = new Date(epochMs);
  const two = (n) => String(n).padStart(2, '0');
  return two(d.getHours()) + ':' + two(d.getMinutes()) + (withSeconds ? ':' + two(d.getSeconds()) : '');
}
/**
 * Draws series (name -> values, null for no data) into the svg #id. Point i is at
 * startMs + i * stepMs. unit labels the value axis ('req/s', 'ms', 'tokens').
 */
function drawChart(id, series, options) {
  const svg = $(id);
  const names = Object.keys(series);
  const length = Math.max(0, ...names.map((n) => series[n].length));
  const values = names.flatMap((n) => series[n].filter((v) => v != null));
  const max = niceMax(Math.max(0, ...values));
  const { width, height, left, right, top, bottom } = CHART;
  const plotW = width - left - right, plotH = height - top - bottom;
  const x = (i) => left + (length <= 1 ? 0 : (i / (length - 1)) * plotW);
  const y = (v) => top + plotH - (v / max) * plotH;
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
  svg.replaceChildren();
  for (let t = 0; t <= 4; t++) {
    const value = (max * t) / 4;
    svg.append(svgEl('line', { x1: left, x2: width - right, y1: y(value), y2: y(value), class: 'grid' }));
    svg.append(svgEl('text', { x: left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'tick' }, formatValue(value, t === 4 ? options.unit : '')));
  }
  const spanMs = Math.max(0, length - 1) * options.stepMs;
  const ticks = 4;
  for (let t = 0; t <= ticks && length > 1; t++) {
    const i = Math.round(((length - 1) * t) / ticks);
    svg.append(svgEl('line', { x1: x(i), x2: x(i), y1: top + plotH, y2: top + plotH + 4, class: 'axis' }));
    svg.append(svgEl('text', { x: x(i), y: height - 8, 'text-anchor': t === 0 ? 'start' : t === ticks ? 'end' : 'middle', class: 'tick' }, clock(options.startMs + i * options.stepMs, spanMs < 15 * 60_000)));
  }
  svg.append(svgEl('line', { x1: left, x2: left, y1: top, y2: top + plotH, class: 'axis' }));
  svg.append(svgEl('line', { x1: left, x2: width - right, y1: top + plotH, y2: top + plotH, class: 'axis' }));
  names.forEach((name, n) => {
    const points = series[name].map((v, i) => (v == null ? null : x(i).toFixed(1) + ',' + y(v).toFixed(1))).filter(Boolean).join(' ');
    svg.append(svgEl('polyline', { points, stroke: COLORS[n % COLORS.length], class: 'series' }));
  });
  svg.dataset.max = String(Math.max(0, ...values));
  const peak = values.length ? formatValue(Math.max(...values), options.unit) : 'no data';
  svg.setAttribute('aria-label', (options.label || '') + ': peak ' + peak + ' between ' + clock(options.startMs, true) + ' and ' + clock(options.startMs + spanMs, true));
  const legend = options.legend && $(options.legend);
  if (legend) legend.replaceChildren(...names.map((name, n) => { const span = el('span', {}, name); span.style.color = COLORS[n % COLORS.length]; return span; }));
}
`;

/** The charts' share of the page's stylesheet. */
export const CHART_STYLE = `
svg.chart { width: 100%; height: auto; display: block; font-size: 13px; }
svg.chart .series { fill: none; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
svg.chart .grid { stroke: var(--line); stroke-width: .5; }
svg.chart .axis { stroke: var(--muted); stroke-width: 1; }
svg.chart .tick { fill: var(--muted); }
`;
