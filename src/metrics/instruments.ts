/**
 * Prometheus instruments kept in plain Maps: a request updates numbers, a scrape renders them
 * as the text exposition format (version 0.0.4). Label values are given in the order of the
 * instrument's label names.
 */

/** Something a scrape renders: `# HELP`, `# TYPE` and its samples. */
export interface Instrument {
  render(): string;
}

/** A label value as the text format writes it (backslash, quote and newline escaped). */
function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

/** `{a="x",b="y"}` for names and values (empty when there are none). */
function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`);
  if (extra !== "") pairs.push(extra);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** A sample value as the text format writes it. */
function numberText(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}\n` +
    `# TYPE ${name} ${type}\n`;
}

/** The Map key of a label set. */
function keyOf(values: readonly string[]): string {
  return values.length === 1 ? values[0]! : values.join("\u0000");
}

/** A monotonically increasing count per label set. */
export class Counter implements Instrument {
  readonly #series = new Map<string, { values: readonly string[]; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
  ) {}

  /** Adds `by` (default 1) to the series of `values`. */
  inc(values: readonly string[], by = 1): void {
    const key = keyOf(values);
    const series = this.#series.get(key);
    if (series) series.value += by;
    else this.#series.set(key, { values: [...values], value: by });
  }

  render(): string {
    let text = header(this.name, this.help, "counter");
    for (const { values, value } of this.#series.values()) {
      text += `${this.name}${labelText(this.labels, values)} ${numberText(value)}\n`;
    }
    return text;
  }
}

interface HistogramSeries {
  values: readonly string[];
  /** Observations per bucket (not cumulative; the last is above every bound). */
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted in buckets per label set (rendered cumulative, with `_sum` and
 * `_count`). */
export class Histogram implements Instrument {
  readonly #series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
    /** Upper bounds, ascending. */
    readonly buckets: readonly number[],
  ) {}

  /** Counts `value` in the series of `values`. */
  observe(values: readonly string[], value: number): void {
    const key = keyOf(values);
    let series = this.#series.get(key);
    if (!series) {
      series = {
        values: [...values],
        counts: new Array(this.buckets.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, series);
    }
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && value > buckets[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
  }

  render(): string {
    const name = this.name;
    let text = header(name, this.help, "histogram");
    for (const { values, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += counts[i]!;
        const le = `le="${numberText(i < this.buckets.length ? this.buckets[i]! : Infinity)}"`;
        text += `${name}_bucket${labelText(this.labels, values, le)} ${cumulative}\n`;
      }
      const labels = labelText(this.labels, values);
      text += `${name}_sum${labels} ${numberText(sum)}\n${name}_count${labels} ${count}\n`;
    }
    return text;
  }
}

/** A value read when scraped: one sample per label set `read` returns. */
export class Gauge implements Instrument {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
    readonly read: () => Iterable<readonly [readonly string[], number]>,
  ) {}

  render(): string {
    let text = header(this.name, this.help, "gauge");
    for (const [values, value] of this.read()) {
      text += `${this.name}${labelText(this.labels, values)} ${numberText(value)}\n`;
    }
    return text;
  }
}

/** Renders instruments in order as one exposition. */
export function renderAll(instruments: readonly Instrument[]): string {
  return instruments.map((instrument) => instrument.render()).join("");
}
