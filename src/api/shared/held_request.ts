/**
 * A door's canonical request, handed over once: the door lets go of it then, since a stream's
 * door lives as long as the stream and the request holds the whole prompt.
 */
import type { CanonicalRequest } from "../../canonical/conversation.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { CallContext } from "../../providers/types.ts";

/** The request a door parsed, until the call takes it (see the module doc). */
export class HeldRequest {
  #req: CanonicalRequest | null;

  constructor(req: CanonicalRequest) {
    this.#req = req;
  }

  /** The request, let go of. */
  take(): CanonicalRequest {
    const req = this.#req;
    if (req === null) throw new Error("the request was taken already");
    this.#req = null;
    return req;
  }

  /** The request for the canonical path: the fields of the door's protocol it does not model,
   * and `dropped`, named as left out; and the body let go of (the request holds what it held). */
  canonical(
    ctx: RequestContext,
    call: CallContext,
    dropped: Iterable<string> = [],
  ): CanonicalRequest {
    const req = this.take();
    for (const name of Object.keys(req.extras.fields)) call.dropped.add(name);
    for (const name of dropped) call.dropped.add(name);
    ctx.takeBody();
    return req;
  }
}
