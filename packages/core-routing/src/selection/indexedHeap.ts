/**
 * @module indexedHeap
 * A binary heap of candidate slots with O(log n) update and removal by slot,
 * so strategies that pick "the best by some key" stay O(log n) per pick
 * while the keys (quota, latency, in-flight count) change under them.
 */

/** Min-heap of small non-negative integers ordered by `less`. */
export class IndexedHeap {
  private readonly less: (a: number, b: number) => boolean;
  private items: number[] = [];
  /** position[slot] = index in items, or -1 when absent. */
  private position: Int32Array = new Int32Array(0);

  constructor(less: (a: number, b: number) => boolean) {
    this.less = less;
  }

  get size(): number {
    return this.items.length;
  }

  /** Best slot, or -1 when empty. */
  peek(): number {
    return this.items.length > 0 ? this.items[0]! : -1;
  }

  has(slot: number): boolean {
    return slot < this.position.length && this.position[slot]! >= 0;
  }

  /** Every slot in heap order (not sorted). */
  slots(): readonly number[] {
    return this.items;
  }

  clear(): void {
    this.items = [];
    this.position.fill(-1);
  }

  insert(slot: number): void {
    if (this.has(slot)) {
      this.update(slot);
      return;
    }
    if (slot >= this.position.length) {
      const grown = new Int32Array(Math.max(slot + 1, this.position.length * 2)).fill(-1);
      grown.set(this.position);
      this.position = grown;
    }
    this.items.push(slot);
    this.position[slot] = this.items.length - 1;
    this.up(this.items.length - 1);
  }

  remove(slot: number): void {
    if (!this.has(slot)) return;
    const index = this.position[slot]!;
    const last = this.items.pop()!;
    this.position[slot] = -1;
    if (index < this.items.length) {
      this.items[index] = last;
      this.position[last] = index;
      this.up(index);
      this.down(this.position[last]!);
    }
  }

  /** Restores order after `slot`'s key changed. */
  update(slot: number): void {
    if (!this.has(slot)) return;
    const index = this.position[slot]!;
    this.up(index);
    this.down(this.position[slot]!);
  }

  private up(index: number): void {
    const items = this.items;
    const slot = items[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentSlot = items[parent]!;
      if (!this.less(slot, parentSlot)) break;
      items[index] = parentSlot;
      this.position[parentSlot] = index;
      index = parent;
    }
    items[index] = slot;
    this.position[slot] = index;
  }

  private down(index: number): void {
    const items = this.items;
    const length = items.length;
    const slot = items[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.less(items[right]!, items[left]!) ? right : left;
      const childSlot = items[child]!;
      if (!this.less(childSlot, slot)) break;
      items[index] = childSlot;
      this.position[childSlot] = index;
      index = child;
    }
    items[index] = slot;
    this.position[slot] = index;
  }
}
