/** One moderated item: a text and the images that go with it. */
export interface ModerationPair {
  text: string;
  /** Image data URLs paired with the text (possibly none). */
  images: string[];
}

/**
 * Pairs texts with images (spec §2.7 "per text+image pair"): image i goes with text i, and
 * images beyond the last text all go with the last text. So there is always exactly one pair,
 * and one result, per text.
 */
export function pairInputs(texts: readonly string[], images: readonly string[]): ModerationPair[] {
  const pairs = texts.map((text) => ({ text, images: [] as string[] }));
  images.forEach((image, i) => pairs[Math.min(i, pairs.length - 1)]?.images.push(image));
  return pairs;
}
