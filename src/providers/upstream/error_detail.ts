/**
 * What an upstream's error body said, and that detail made fit to repeat to the client: the
 * provider's key removed, long text cut, and the upstream's model name replaced by the
 * gateway's id.
 */
import { clip } from "../../quote.ts";

/** What an upstream's error body said; fields it did not carry are `null`. */
export interface UpstreamErrorDetail {
  message: string | null;
  type: string | null;
  code: string | null;
  param: string | null;
}

/** The detail of an error body that said nothing. */
export const NO_DETAIL: UpstreamErrorDetail = {
  message: null,
  type: null,
  code: null,
  param: null,
};

/** Characters of an upstream's error message that are repeated, at most. */
const MESSAGE_CHARS = 1000;
/** Characters of one value quoted in that message (or of a `param`), at most. */
const QUOTED_CHARS = 100;
/** A value quoted in a message: an opening quote that does not follow a letter or digit, up to
 * the same quote not followed by one (so "model's" quotes nothing), or to the end. */
const QUOTED =
  /(?<![\p{L}\p{N}])(["'`])((?:(?!\1(?![\p{L}\p{N}]))[\s\S])*)(\1(?![\p{L}\p{N}])|$)/gu;
/** What a `type` or `code` must look like to be kept. */
const IDENTIFIER = /^[\w.:-]{1,100}$/;

/**
 * An upstream's error detail made safe to repeat to the client (whose content it may quote):
 * `secret` removed, the message cut to 1,000 characters and every value quoted in it to 100,
 * `param` cut to 100, and `type` and `code` kept only when they are identifiers.
 */
export function boundedDetail(
  detail: UpstreamErrorDetail,
  secret: string | null,
): UpstreamErrorDetail {
  const { message, type, code, param } = detail;
  return {
    message: message === null ? null : clipQuoted(clip(redact(message, secret), MESSAGE_CHARS)),
    type: identifier(type, secret),
    code: identifier(code, secret),
    param: param === null ? null : clip(redact(param, secret), QUOTED_CHARS),
  };
}

/** `text` with every quoted value longer than 100 characters cut to 100. */
function clipQuoted(text: string): string {
  return text.replace(
    QUOTED,
    (whole: string, quote: string, value: string, close: string) =>
      value.length <= QUOTED_CHARS ? whole : `${quote}${clip(value, QUOTED_CHARS)}${close}`,
  );
}

function identifier(value: string | null, secret: string | null): string | null {
  return value !== null && IDENTIFIER.test(value) && value !== secret ? value : null;
}

/** Removes a secret from text that came from outside (upstream messages, error reasons). */
export function redact(text: string, secret: string | null): string {
  return secret ? text.replaceAll(secret, "[redacted]") : text;
}

/** `message` with the upstream model's name, where it stands as a name (not inside a word: an
 * upstream model `fa` leaves "fake" alone; a full stop or a colon may follow it), replaced by
 * the gateway's id. */
export function rewriteModel(message: string, model?: { id: string; upstream: string }): string {
  if (!model || model.upstream === model.id || model.upstream === "") return message;
  if (!message.includes(model.upstream)) return message;
  const name = model.upstream.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return message.replace(
    new RegExp(`(?<![\\w.:-])${name}(?![\\w/-]|[.:]\\w)`, "g"),
    () => model.id,
  );
}
