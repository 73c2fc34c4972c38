/**
 * A list for what comes and goes (requests in flight, their time limits) in an owner that lives
 * as long as the process: entries are added at the end and removed through the handle `add`
 * returned, both in constant time, and a removed entry keeps nothing alive.
 *
 * Not a `Set` or `Map`: V8 replaces a Set's table as it grows and shrinks, and the table it
 * leaves keeps its entries and a link to the next one. Once such a table has reached the old
 * generation, every later table and entry outlives each scavenge until the next full
 * collection, and so does all that the entries reach: whole requests. Measured in Switchyard
 * (README, Performance: what V8 keeps through scavenges): two scavenges freed 77.6% of 20,000
 * ended requests while they went through sets, 99.7% once these lists replaced them.
 */

/** One entry of an {@link EntryList}: the handle to remove it with. */
export class ListEntry<T> {
  /** The value; `undefined` once removed. */
  value: T | undefined;
  prev: ListEntry<T> | null = null;
  next: ListEntry<T> | null = null;
  /** The list it is in; `null` once removed. */
  list: EntryList<T> | null;

  constructor(list: EntryList<T>, value: T) {
    this.list = list;
    this.value = value;
  }
}

/** Values in the order they were added (see the module comment). */
export class EntryList<T> {
  #head: ListEntry<T> | null = null;
  #tail: ListEntry<T> | null = null;
  #size = 0;

  /** How many values are in the list. */
  get size(): number {
    return this.#size;
  }

  /** Adds `value` at the end; the entry removes it. */
  add(value: T): ListEntry<T> {
    const entry = new ListEntry(this, value);
    const tail = this.#tail;
    if (tail === null) this.#head = entry;
    else {
      tail.next = entry;
      entry.prev = tail;
    }
    this.#tail = entry;
    this.#size++;
    return entry;
  }

  /** Removes `entry`; `false` when it was not (or no longer) in this list. */
  delete(entry: ListEntry<T>): boolean {
    if (entry.list !== this) return false;
    const { prev, next } = entry;
    if (prev === null) this.#head = next;
    else prev.next = next;
    if (next === null) this.#tail = prev;
    else next.prev = prev;
    entry.prev = entry.next = entry.list = null;
    entry.value = undefined;
    this.#size--;
    return true;
  }

  /** The first value (the oldest still in the list). */
  first(): T | undefined {
    return this.#head?.value;
  }

  /** The values in order, as an array (removing entries while going through it is safe). */
  values(): T[] {
    const out: T[] = [];
    for (let entry = this.#head; entry !== null; entry = entry.next) out.push(entry.value!);
    return out;
  }

  /** Removes every entry. */
  clear(): void {
    while (this.#head !== null) this.delete(this.#head);
  }
}
