import type { Pricing } from "../config/types.ts";
import type { Reservation } from "../limits/ledger.ts";

/** What a request holds until it settles. */
export interface Held {
  /** The prompt's estimated tokens (counted when a stream is cut before its usage report). */
  input: number;
  tokens?: Reservation;
  spend?: { reservation: Reservation; pricing: Pricing };
}
