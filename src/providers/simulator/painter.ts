import { random, type Scene } from "./scene.ts";

/** An RGB colour, 0-255 per channel. */
type Rgb = readonly [number, number, number];

/** How the generation parameters shape the picture. */
export interface PaintOptions {
  /** Higher values give more saturated, contrasty colours (default 3.5). */
  guidanceScale: number;
  /** Fewer steps leave more grain (default 30). */
  steps: number;
}

/** HSL (degrees, 0-1, 0-1) to RGB. */
export function hsl(h: number, s: number, l: number): Rgb {
  const hue = ((h % 360) + 360) % 360 / 360;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const channel = (t: number) => {
    const x = t < 0 ? t + 1 : t > 1 ? t - 1 : t;
    if (x < 1 / 6) return p + (q - p) * 6 * x;
    if (x < 1 / 2) return q;
    if (x < 2 / 3) return p + (q - p) * (2 / 3 - x) * 6;
    return p;
  };
  return [channel(hue + 1 / 3) * 255, channel(hue) * 255, channel(hue - 1 / 3) * 255];
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];

/** An RGB raster with the few drawing operations the painter needs. */
class Canvas {
  readonly data: Uint8ClampedArray;
  constructor(readonly width: number, readonly height: number) {
    this.data = new Uint8ClampedArray(width * height * 3);
  }

  /** Blends `colour` into one pixel with opacity `a` (0-1). */
  blend(x: number, y: number, colour: Rgb, a: number): void {
    const p = (y * this.width + x) * 3;
    const d = this.data;
    d[p] = d[p]! + (colour[0] - d[p]!) * a;
    d[p + 1] = d[p + 1]! + (colour[1] - d[p + 1]!) * a;
    d[p + 2] = d[p + 2]! + (colour[2] - d[p + 2]!) * a;
  }

  /** Fills rows y0..y1 with a vertical gradient. */
  gradient(y0: number, y1: number, top: Rgb, bottom: Rgb): void {
    const { width, data } = this;
    const end = Math.min(this.height, Math.round(y1));
    for (let y = Math.max(0, Math.round(y0)); y < end; y++) {
      const c = mix(top, bottom, (y - y0) / Math.max(1, y1 - y0));
      for (let x = 0, p = y * width * 3; x < width; x++, p += 3) {
        data[p] = c[0];
        data[p + 1] = c[1];
        data[p + 2] = c[2];
      }
    }
  }

  /** A soft-edged ellipse, optionally with a glow around it. */
  ellipse(
    cx: number,
    cy: number,
    rx: number,
    ry: number,
    colour: Rgb,
    opacity = 1,
    glow = 0,
  ): void {
    const reach = 1 + glow;
    const x0 = Math.max(0, Math.floor(cx - rx * reach)), x1 = Math.min(this.width, cx + rx * reach);
    const y0 = Math.max(0, Math.floor(cy - ry * reach)),
      y1 = Math.min(this.height, cy + ry * reach);
    const edge = 1.5 / Math.min(rx, ry);
    for (let y = y0; y < y1; y++) {
      const dy = (y - cy) / ry;
      for (let x = x0; x < x1; x++) {
        const dx = (x - cx) / rx;
        const d = Math.sqrt(dx * dx + dy * dy);
        let a = d < 1 - edge ? 1 : d < 1 ? (1 - d) / edge : 0;
        if (glow > 0 && d >= 1 && d < reach) a = Math.max(a, 0.5 * ((reach - d) / glow) ** 2);
        if (a > 0) this.blend(x, y, colour, a * opacity);
      }
    }
  }

  /** A filled axis-aligned rectangle. */
  rect(x: number, y: number, w: number, h: number, colour: Rgb, opacity = 1): void {
    const x0 = Math.max(0, Math.round(x)), x1 = Math.min(this.width, Math.round(x + w));
    const y0 = Math.max(0, Math.round(y)), y1 = Math.min(this.height, Math.round(y + h));
    for (let yy = y0; yy < y1; yy++) {
      for (let xx = x0; xx < x1; xx++) this.blend(xx, yy, colour, opacity);
    }
  }

  /** Fills below a ridge line (one height per column) with a vertical gradient. */
  ridge(heights: Float32Array, top: Rgb, bottom: Rgb, floor = this.height): void {
    for (let x = 0; x < this.width; x++) {
      const start = Math.max(0, Math.floor(heights[x]!));
      for (let y = start; y < Math.min(floor, this.height); y++) {
        this.blend(x, y, mix(top, bottom, (y - start) / Math.max(1, floor - start)), 1);
      }
    }
  }

  /** An upright triangle (a conifer) standing on `baseY`. */
  triangle(cx: number, baseY: number, w: number, h: number, colour: Rgb): void {
    for (let y = Math.max(0, Math.floor(baseY - h)); y < Math.min(this.height, baseY); y++) {
      const half = (w / 2) * ((y - (baseY - h)) / h);
      const x0 = Math.max(0, Math.round(cx - half)), x1 = Math.min(this.width, cx + half);
      for (let x = x0; x < x1; x++) this.blend(x, y, colour, 1);
    }
  }
}

/** Column heights of a natural-looking ridge around `base` (fraction of the height). */
function ridgeLine(c: Canvas, rand: () => number, base: number, amplitude: number): Float32Array {
  const waves = Array.from({ length: 5 }, (_, i) => ({
    freq: (1.5 + rand() * 2) * (i + 1) * Math.PI * 2 / c.width,
    phase: rand() * Math.PI * 2,
    amp: amplitude / (i + 1.2),
  }));
  const out = new Float32Array(c.width);
  for (let x = 0; x < c.width; x++) {
    let h = 0;
    for (const w of waves) h += Math.sin(x * w.freq + w.phase) * w.amp;
    out[x] = (base - h) * c.height;
  }
  return out;
}

function sky(c: Canvas, scene: Scene, horizon: number): void {
  const h = c.height * horizon;
  const tint = scene.colourNamed ? scene.hue : 208;
  let top: Rgb, bottom: Rgb;
  if (scene.time === "night") [top, bottom] = [hsl(232, 0.5, 0.05), hsl(tint, 0.45, 0.2)];
  else if (scene.time === "sunset") {
    [top, bottom] = [hsl(265, 0.45, 0.25), hsl(scene.colourNamed ? scene.hue : 22, 0.85, 0.6)];
  } else [top, bottom] = [hsl(tint, 0.6, 0.42), hsl(tint - 10, 0.5, 0.82)];
  c.gradient(0, h, top, bottom);
  // Below the horizon too, so no unpainted row shows under an uneven ground line.
  c.gradient(h, c.height, bottom, bottom);
}

function abstract(c: Canvas, scene: Scene, rand: () => number): void {
  const { width: w, height: h } = c;
  c.gradient(0, h, hsl(scene.hue, 0.65, 0.55), hsl(scene.accent, 0.55, 0.25));
  const shapes = 5 + Math.floor(rand() * 5);
  for (let i = 0; i < shapes; i++) {
    const hue = rand() < 0.6 ? scene.hue + (rand() - 0.5) * 40 : scene.accent;
    const colour = hsl(hue, 0.55 + rand() * 0.4, 0.3 + rand() * 0.5);
    const x = rand() * w, y = rand() * h, size = (0.08 + rand() * 0.25) * Math.min(w, h);
    if (rand() < 0.6) c.ellipse(x, y, size, size * (0.6 + rand() * 0.8), colour, 0.85);
    else c.rect(x - size, y - size / 2, size * 2, size, colour, 0.75);
  }
}

function landscape(c: Canvas, scene: Scene, rand: () => number): void {
  const { width: w, height: h } = c;
  const el = scene.elements;
  const water = el.has("water");
  const horizon = water ? 0.62 : 0.72;
  const groundY = h * horizon;
  sky(c, scene, horizon);
  const night = scene.time === "night";
  if (el.has("stars")) {
    for (let i = 0; i < (w * h) / 2500; i++) {
      const x = Math.floor(rand() * w), y = Math.floor(rand() * groundY * 0.9);
      c.ellipse(x, y, 1 + rand() * 1.5, 1 + rand() * 1.5, [255, 250, 230], 0.5 + rand() * 0.5);
    }
  }
  const r = Math.min(w, h);
  if (el.has("sun")) {
    const y = scene.time === "sunset" ? groundY * 0.82 : h * (0.15 + rand() * 0.15);
    const colour: Rgb = scene.time === "sunset" ? [255, 170, 80] : [255, 240, 190];
    c.ellipse(w * (0.2 + rand() * 0.6), y, r * 0.07, r * 0.07, colour, 1, 1.6);
  }
  if (el.has("moon")) {
    const x = w * (0.15 + rand() * 0.7), y = h * (0.12 + rand() * 0.15);
    c.ellipse(x, y, r * 0.055, r * 0.055, [240, 240, 225], 1, 0.8);
    c.ellipse(x + r * 0.025, y - r * 0.01, r * 0.05, r * 0.05, hsl(232, 0.45, 0.08), 0.9);
  }
  if (el.has("clouds")) {
    for (let i = 0; i < 3 + rand() * 4; i++) {
      const x = rand() * w, y = h * (0.08 + rand() * 0.3);
      const colour: Rgb = night ? [70, 75, 95] : [250, 250, 255];
      for (let k = 0; k < 4; k++) {
        c.ellipse(
          x + (k - 1.5) * r * 0.05,
          y + (rand() - 0.5) * r * 0.03,
          r * 0.07,
          r * 0.035,
          colour,
          0.7,
        );
      }
    }
  }
  if (el.has("mountains")) {
    const far = night ? hsl(230, 0.2, 0.15) : hsl(scene.colourNamed ? scene.hue : 220, 0.2, 0.55);
    c.ridge(ridgeLine(c, rand, horizon - 0.22, 0.06), far, mix(far, [255, 255, 255], 0.2), groundY);
    const near = night ? hsl(230, 0.2, 0.08) : hsl(scene.accent, 0.25, 0.3);
    c.ridge(ridgeLine(c, rand, horizon - 0.1, 0.05), near, mix(near, [0, 0, 0], 0.3), groundY);
  }
  if (el.has("city")) {
    let x = -rand() * w * 0.05;
    while (x < w) {
      const bw = w * (0.04 + rand() * 0.06), bh = h * (0.1 + rand() * 0.35);
      const body = night
        ? hsl(230, 0.15, 0.12 + rand() * 0.08)
        : hsl(210, 0.1, 0.35 + rand() * 0.3);
      c.rect(x, groundY - bh, bw, bh, body);
      const lit: Rgb = night ? [255, 220, 130] : [200, 225, 245];
      for (let wy = groundY - bh + 6; wy < groundY - 8; wy += 14) {
        for (let wx = x + 5; wx < x + bw - 8; wx += 11) {
          if (rand() < 0.55) c.rect(wx, wy, 5, 7, lit);
        }
      }
      x += bw + rand() * w * 0.01;
    }
  }
  if (!water) {
    const ground = el.has("snow")
      ? hsl(210, 0.2, 0.92)
      : el.has("desert")
      ? hsl(38, 0.6, 0.62)
      : hsl(scene.colourNamed ? scene.accent : 105, 0.45, night ? 0.12 : 0.35);
    c.ridge(ridgeLine(c, rand, horizon, 0.02), ground, mix(ground, [0, 0, 0], 0.35));
  }
  if (el.has("trees")) {
    const colour = night ? hsl(150, 0.3, 0.08) : hsl(140, 0.45, 0.2);
    for (let i = 0; i < 8 + rand() * 14; i++) {
      const th = h * (0.08 + rand() * 0.14);
      c.triangle(rand() * w, groundY + (water ? 0 : rand() * h * 0.1), th * 0.45, th, colour);
    }
  }
  if (el.has("flowers") && !water) {
    for (let i = 0; i < (w * h) / 4000; i++) {
      const colour = hsl(rand() < 0.5 ? scene.hue : scene.accent, 0.8, 0.6);
      const y = groundY + (h - groundY) * (0.1 + rand() * 0.9);
      c.ellipse(rand() * w, y, 2 + rand() * 4, 2 + rand() * 4, colour);
    }
  }
  if (water) reflect(c, Math.floor(groundY), scene);
}

/** Water below the horizon: the scene above mirrored, darkened, tinted and rippled. */
function reflect(c: Canvas, horizon: number, scene: Scene): void {
  const { width: w, height: h, data } = c;
  const tint = hsl(scene.colourNamed ? scene.hue : 205, 0.6, 0.3);
  for (let y = horizon; y < h; y++) {
    const depth = (y - horizon) / (h - horizon);
    const src = Math.max(0, horizon - 1 - Math.floor((y - horizon) * 0.9));
    const shift = Math.round(Math.sin(y * 0.35) * (1 + depth * 6));
    for (let x = 0; x < w; x++) {
      const sx = Math.min(w - 1, Math.max(0, x + shift));
      const s = (src * w + sx) * 3, p = (y * w + x) * 3;
      const keep = 0.55 - depth * 0.25;
      data[p] = data[s]! * keep + tint[0] * (1 - keep);
      data[p + 1] = data[s + 1]! * keep + tint[1] * (1 - keep);
      data[p + 2] = data[s + 2]! * keep + tint[2] * (1 - keep);
    }
  }
}

/** Saturation from the guidance scale, grain from the step count, and a soft vignette. */
function finish(c: Canvas, seed: number, options: PaintOptions): void {
  const { width: w, height: h, data } = c;
  const saturation = Math.min(2, Math.max(0.2, 0.55 + options.guidanceScale * 0.13));
  const grain = 90 / Math.max(1, options.steps);
  const cx = w / 2, cy = h / 2, norm = 1 / (cx * cx + cy * cy);
  for (let y = 0; y < h; y++) {
    for (let x = 0, p = y * w * 3; x < w; x++, p += 3) {
      let n = Math.imul(x * 374761393 + y * 668265263, 0x27d4eb2d) ^ seed;
      n = Math.imul(n ^ (n >>> 13), 1274126177);
      const noise = ((n >>> 24) / 255 - 0.5) * grain;
      const dx = x - cx, dy = y - cy;
      const light = 1 - 0.25 * (dx * dx + dy * dy) * norm;
      const r = data[p]!, g = data[p + 1]!, b = data[p + 2]!;
      const grey = 0.299 * r + 0.587 * g + 0.114 * b;
      data[p] = (grey + (r - grey) * saturation) * light + noise;
      data[p + 1] = (grey + (g - grey) * saturation) * light + noise;
      data[p + 2] = (grey + (b - grey) * saturation) * light + noise;
    }
  }
}

/** Paints a scene at a size; returns RGB bytes, row by row. */
export function paintScene(scene: Scene, width: number, height: number, options: PaintOptions) {
  const canvas = new Canvas(width, height);
  const rand = random(scene.seed);
  if (scene.elements.size === 0) abstract(canvas, scene, rand);
  else landscape(canvas, scene, rand);
  finish(canvas, scene.seed, options);
  return new Uint8Array(canvas.data.buffer);
}
