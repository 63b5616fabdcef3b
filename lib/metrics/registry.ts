// A small Prometheus registry: counters, gauges and histograms with labels, and collectors that
// read a value at scrape time, rendered in the text exposition format (version 0.0.4). Written
// here rather than taken from npm: the server needs a few dozen series, one format and no
// dependencies, and the hot path must cost a few map lookups and an addition.
//
// A series is found by its label values through nested maps (one level per label), so counting
// a call allocates nothing once its series exists; strings are built only when scraped.

/** The content type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One sample a collector reports at scrape time. */
export interface Sample {
  labels?: Readonly<Record<string, string>>;
  value: number;
}

type Kind = "counter" | "gauge" | "histogram";

interface Family {
  name: string;
  help: string;
  kind: Kind;
  render(out: string[]): void | Promise<void>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Escapes a label value: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}

/** Escapes a HELP text: backslash and line feed. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => c === "\n" ? "\\n" : "\\\\");
}

/** A sample value as the format spells it (`+Inf`, `-Inf`, `NaN`, or a number). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts: string[] = [];
  for (let i = 0; i < names.length; i++) parts.push(`${names[i]}="${escapeLabelValue(values[i] ?? "")}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
}

function checkNames(name: string, labelNames: readonly string[]): void {
  if (!NAME.test(name)) throw new Error(`Invalid metric name "${name}"`);
  for (const l of labelNames) {
    if (!LABEL.test(l) || l.startsWith("__") || l === "le") {
      throw new Error(`Invalid label name "${l}" on ${name}`);
    }
  }
}

/**
 * Series of one family by label values: a map per label level. `get` takes up to four values
 * as separate arguments so that finding a series allocates nothing.
 */
class SeriesMap<S> {
  #root = new Map<string, unknown>();
  #all: { values: string[]; series: S }[] = [];
  #depth: number;
  #make: () => S;

  constructor(depth: number, make: () => S) {
    this.#depth = depth;
    this.#make = make;
  }

  get(a?: string, b?: string, c?: string, d?: string): S {
    if (this.#depth === 0) return this.#only();
    let node = this.#root;
    for (let i = 0; i < this.#depth - 1; i++) {
      const v = (i === 0 ? a : i === 1 ? b : c) ?? "";
      let next = node.get(v) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        node.set(v, next);
      }
      node = next;
    }
    const last = (this.#depth === 1 ? a : this.#depth === 2 ? b : this.#depth === 3 ? c : d) ?? "";
    let series = node.get(last) as S | undefined;
    if (series === undefined) {
      series = this.#make();
      node.set(last, series);
      this.#all.push({ values: [a ?? "", b ?? "", c ?? "", d ?? ""].slice(0, this.#depth), series });
    }
    return series;
  }

  #only(): S {
    const first = this.#all[0];
    if (first) return first.series;
    const series = this.#make();
    this.#all.push({ values: [], series });
    return series;
  }

  entries(): readonly { values: string[]; series: S }[] {
    return this.#all;
  }
}

/** One counter or gauge series. */
export class Cell {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
  set(value: number): void {
    this.value = value;
  }
}

/** A family of plain numbers, one {@linkcode Cell} per label set: what counters and gauges share. */
abstract class CellFamily implements Family {
  abstract readonly kind: Kind;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly series: SeriesMap<Cell>;

  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    if (labelNames.length > 4) throw new Error(`At most four labels: ${name}`);
    checkNames(name, labelNames);
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.series = new SeriesMap(labelNames.length, () => new Cell());
  }

  /** The series of these label values (in `labelNames` order). */
  labels(a?: string, b?: string, c?: string, d?: string): Cell {
    return this.series.get(a, b, c, d);
  }

  render(out: string[]): void {
    for (const { values, series } of this.series.entries()) {
      out.push(`${this.name}${labelText(this.labelNames, values)} ${formatValue(series.value)}`);
    }
  }
}

/** A counter: only goes up (`inc`). Names end in `_total`. */
export class Counter extends CellFamily {
  readonly kind = "counter";

  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, labelNames);
    if (!name.endsWith("_total")) throw new Error(`A counter's name ends in _total: ${name}`);
  }

  /** Adds `by` to the series of these label values. */
  inc(by: number, a?: string, b?: string, c?: string, d?: string): void {
    this.series.get(a, b, c, d).value += by;
  }
}

/** A gauge set by the code that owns the value. */
export class Gauge extends CellFamily {
  readonly kind = "gauge";
}

/** A value read when scraped (sessions open, memory in use, breakers' states). */
export class CollectedFamily implements Family {
  readonly name: string;
  readonly help: string;
  readonly kind: Kind;
  #collect: () => readonly Sample[] | Promise<readonly Sample[]>;

  constructor(
    name: string,
    help: string,
    kind: "counter" | "gauge",
    collect: () => readonly Sample[] | Promise<readonly Sample[]>,
  ) {
    checkNames(name, []);
    if (kind === "counter" && !name.endsWith("_total")) {
      throw new Error(`A counter's name ends in _total: ${name}`);
    }
    this.name = name;
    this.help = help;
    this.kind = kind;
    this.#collect = collect;
  }

  async render(out: string[]): Promise<void> {
    let samples: readonly Sample[];
    try {
      samples = await this.#collect();
    } catch {
      // A source out of reach (a shared store) leaves its family empty for this scrape.
      return;
    }
    for (const s of samples) {
      const names = Object.keys(s.labels ?? {});
      checkNames(this.name, names);
      const values = names.map((n) => s.labels![n]!);
      out.push(`${this.name}${labelText(names, values)} ${formatValue(s.value)}`);
    }
  }
}

/** One histogram series: a count per bucket (not cumulative: rendering adds them up), sum, count. */
export class HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  #bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A histogram with fixed upper bounds (`le`); `+Inf` is added. */
export class Histogram implements Family {
  readonly kind = "histogram";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly bounds: readonly number[];
  #series: SeriesMap<HistogramCell>;

  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]) {
    if (labelNames.length > 4) throw new Error(`At most four labels: ${name}`);
    checkNames(name, labelNames);
    for (let i = 1; i < bounds.length; i++) {
      if (!(bounds[i]! > bounds[i - 1]!)) throw new Error(`Bucket bounds must increase: ${name}`);
    }
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.bounds = bounds.filter((b) => Number.isFinite(b));
    this.#series = new SeriesMap(labelNames.length, () => new HistogramCell(this.bounds));
  }

  labels(a?: string, b?: string, c?: string, d?: string): HistogramCell {
    return this.#series.get(a, b, c, d);
  }

  observe(value: number, a?: string, b?: string, c?: string, d?: string): void {
    this.#series.get(a, b, c, d).observe(value);
  }

  render(out: string[]): void {
    for (const { values, series } of this.#series.entries()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        const le = `le="${formatValue(this.bounds[i]!)}"`;
        out.push(`${this.name}_bucket${labelText(this.labelNames, values, le)} ${formatValue(cumulative)}`);
      }
      out.push(
        `${this.name}_bucket${labelText(this.labelNames, values, 'le="+Inf"')} ${formatValue(series.count)}`,
      );
      out.push(`${this.name}_sum${labelText(this.labelNames, values)} ${formatValue(series.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, values)} ${formatValue(series.count)}`);
    }
  }
}

/** The families of one process, rendered together. */
export class Registry {
  #families: Family[] = [];
  #names = new Set<string>();

  #add<F extends Family>(family: F): F {
    if (this.#names.has(family.name)) throw new Error(`Metric "${family.name}" is registered twice`);
    this.#names.add(family.name);
    this.#families.push(family);
    return family;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, bounds));
  }

  /** A family whose samples `collect` reads at each scrape. */
  collected(
    name: string,
    help: string,
    kind: "counter" | "gauge",
    collect: () => readonly Sample[] | Promise<readonly Sample[]>,
  ): CollectedFamily {
    return this.#add(new CollectedFamily(name, help, kind, collect));
  }

  /** Every family in the text exposition format, ending with a line feed. */
  async render(): Promise<string> {
    const out: string[] = [];
    for (const f of this.#families) {
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`);
      out.push(`# TYPE ${f.name} ${f.kind}`);
      await f.render(out);
    }
    return `${out.join("\n")}\n`;
  }
}
