/**
 * The simulator's picture plan: what a prompt asks to see (colours, time of day, landscape
 * elements), read from its words, plus a seed from its exact text.
 */

/** The elements the simulator can paint. */
export const ELEMENTS = [
  "sun",
  "moon",
  "stars",
  "clouds",
  "mountains",
  "water",
  "trees",
  "city",
  "desert",
  "snow",
  "flowers",
] as const;
export type Element = typeof ELEMENTS[number];

/** What to paint for a prompt. */
export interface Scene {
  /** 32-bit seed from the prompt's exact text and the image's index. */
  seed: number;
  /** Main hue in degrees: the first colour word, else from the seed. */
  hue: number;
  /** Second hue: the second colour word, else from the seed. */
  accent: number;
  /** Whether the prompt named a colour. */
  colourNamed: boolean;
  time: "day" | "sunset" | "night";
  elements: ReadonlySet<Element>;
}

const COLOURS: Record<string, number> = {
  red: 0,
  crimson: 350,
  scarlet: 5,
  orange: 28,
  amber: 40,
  gold: 45,
  golden: 45,
  yellow: 55,
  lime: 90,
  green: 120,
  emerald: 140,
  teal: 175,
  turquoise: 170,
  cyan: 185,
  blue: 220,
  azure: 210,
  navy: 230,
  indigo: 250,
  purple: 275,
  violet: 270,
  lavender: 260,
  magenta: 300,
  pink: 330,
  rose: 340,
  brown: 25,
};

const ELEMENT_WORDS: Record<string, Element> = {
  sun: "sun",
  sunny: "sun",
  sunshine: "sun",
  moon: "moon",
  moonlight: "moon",
  moonlit: "moon",
  star: "stars",
  stars: "stars",
  starry: "stars",
  galaxy: "stars",
  cloud: "clouds",
  clouds: "clouds",
  cloudy: "clouds",
  sky: "clouds",
  mountain: "mountains",
  mountains: "mountains",
  hills: "mountains",
  hill: "mountains",
  peak: "mountains",
  peaks: "mountains",
  alps: "mountains",
  sea: "water",
  ocean: "water",
  lake: "water",
  river: "water",
  water: "water",
  beach: "water",
  waves: "water",
  harbor: "water",
  harbour: "water",
  tree: "trees",
  trees: "trees",
  forest: "trees",
  woods: "trees",
  pine: "trees",
  pines: "trees",
  jungle: "trees",
  city: "city",
  skyline: "city",
  building: "city",
  buildings: "city",
  skyscraper: "city",
  skyscrapers: "city",
  town: "city",
  street: "city",
  desert: "desert",
  dune: "desert",
  dunes: "desert",
  sand: "desert",
  snow: "snow",
  snowy: "snow",
  winter: "snow",
  ice: "snow",
  flower: "flowers",
  flowers: "flowers",
  meadow: "flowers",
  garden: "flowers",
  field: "flowers",
};

const NIGHT = new Set(["night", "midnight", "dark", "moon", "moonlight", "moonlit", "starry"]);
const SUNSET = new Set(["sunset", "sunrise", "dusk", "dawn", "twilight", "evening", "golden"]);

/** FNV-1a over the UTF-16 code units of a string. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A small fast PRNG (mulberry32): numbers in [0, 1) from a 32-bit seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The scene for image `index` of a prompt. */
export function planScene(prompt: string, index: number): Scene {
  const words = prompt.toLowerCase().match(/[a-z]+/g) ?? [];
  const seed = hashString(`${prompt}\u0000${index}`);
  const rand = random(hashString(prompt));
  const hues = words.map((w) => COLOURS[w]).filter((h) => h !== undefined);
  const elements = new Set<Element>();
  for (const word of words) {
    const element = ELEMENT_WORDS[word];
    if (element) elements.add(element);
  }
  let time: Scene["time"] = "day";
  if (words.some((w) => NIGHT.has(w))) time = "night";
  else if (words.some((w) => SUNSET.has(w))) time = "sunset";
  if (time === "night" && !elements.has("sun")) elements.add("stars");
  if (time === "sunset") elements.add("sun");
  return {
    seed,
    hue: hues[0] ?? Math.floor(rand() * 360),
    accent: hues[1] ?? ((hues[0] ?? Math.floor(rand() * 360)) + 120 + Math.floor(rand() * 120)) %
        360,
    colourNamed: hues.length > 0,
    time,
    elements,
  };
}
