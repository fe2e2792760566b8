// A first-in first-out queue: a ring buffer whose capacity is a power of two, so that push and shift are a
// store, a load and a mask, with no copying (Array.prototype.shift moves every element, and an array with a
// moving head must be sliced now and then). A connection pushes every request it writes and shifts it when
// its answer comes, so this is on the path of every call.

export class Fifo<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16).fill(undefined);
  private mask = 15;
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & this.mask] = item;
    this.count++;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // let it be collected
    this.head = (this.head + 1) & this.mask;
    this.count--;
    return item;
  }

  /** Everything queued, oldest first, without removing it. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++) yield this.items[(this.head + i) & this.mask] as T;
  }

  /** Removes and returns everything queued, oldest first. */
  drain(): T[] {
    const rest = [...this];
    this.items.fill(undefined);
    this.head = 0;
    this.count = 0;
    return rest;
  }

  /** Doubles the capacity, unrolling the ring so that the oldest item is at index 0. */
  private grow(): void {
    const items = [...this] as (T | undefined)[];
    const capacity = this.items.length * 2;
    while (items.length < capacity) items.push(undefined);
    this.items = items;
    this.mask = capacity - 1;
    this.head = 0;
  }
}
