// @ts-check
/// <reference lib="dom" />
/** Horizontal bar charts as inline SVG (no library). */

const SVG = "http://www.w3.org/2000/svg";

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attributes
 * @returns {SVGElement}
 */
function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return /** @type {SVGElement} */ (element);
}

/**
 * @typedef {object} Bar
 * @property {string} label
 * @property {number} value
 */

/**
 * A bar chart of `bars`, one row each, labelled for screen readers by `title` and its values;
 * each value followed by `unit` (such as `%`) when given, and bars scaled to `max` (default the
 * largest value).
 * @param {string} title
 * @param {Bar[]} bars
 * @param {{ unit?: string, max?: number }} [options]
 * @returns {SVGElement}
 */
export function barChart(title, bars, options = {}) {
  const unit = options.unit ?? "";
  const row = 28;
  const labelWidth = 150;
  const width = 400;
  const max = options.max ?? Math.max(1, ...bars.map((b) => b.value));
  const height = Math.max(1, bars.length) * row + 8;
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "chart",
    role: "img",
    "aria-label": `${title}: ${
      bars.map((b) => `${b.label} ${b.value}${unit}`).join(", ") || "none"
    }`,
  });
  const titleElement = svg("title", {});
  titleElement.textContent = title;
  chart.append(titleElement);
  bars.forEach((bar, i) => {
    const y = i * row + 4;
    const label = svg("text", { x: labelWidth - 8, y: y + row / 2 + 4, "text-anchor": "end" });
    label.textContent = bar.label.length > 17 ? `${bar.label.slice(0, 16)}\u2026` : bar.label;
    const barWidth = Math.max(bar.value > 0 ? 2 : 0, (width - labelWidth - 50) * bar.value / max);
    const rect = svg("rect", {
      x: labelWidth,
      y: y + 4,
      width: barWidth,
      height: row - 10,
      rx: 3,
      class: "bar",
    });
    const value = svg("text", { x: labelWidth + barWidth + 6, y: y + row / 2 + 4 });
    value.textContent = `${bar.value.toLocaleString("en-US")}${unit}`;
    chart.append(label, rect, value);
  });
  return chart;
}

/**
 * A score bar from 0 to 1 (moderation scores), with its number.
 * @param {number} score
 * @returns {SVGElement}
 */
export function scoreBar(score) {
  const bar = svg("svg", {
    viewBox: "0 0 100 10",
    class: "score",
    "aria-hidden": "true",
    preserveAspectRatio: "none",
  });
  bar.append(svg("rect", { x: 0, y: 0, width: 100, height: 10, class: "track" }));
  bar.append(
    svg("rect", {
      x: 0,
      y: 0,
      width: Math.max(0, Math.min(1, score)) * 100,
      height: 10,
      class: "bar",
    }),
  );
  return bar;
}
