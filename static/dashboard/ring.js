// A fixed-capacity ring buffer: pushing past capacity forgets the oldest entry, so memory stays
// bounded however long the page runs.
export class Ring {
  constructor(capacity) {
    this.capacity = capacity;
    this.items = new Array(capacity);
    this.start = 0;
    this.length = 0;
  }

  push(item) {
    if (this.length < this.capacity) {
      this.items[(this.start + this.length) % this.capacity] = item;
      this.length += 1;
    } else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  clear() {
    this.items = new Array(this.capacity);
    this.start = 0;
    this.length = 0;
  }

  // The newest `limit` entries, newest first.
  newest(limit) {
    const out = [];
    const count = Math.min(limit, this.length);
    for (let i = 0; i < count; i += 1) {
      out.push(this.items[(this.start + this.length - 1 - i) % this.capacity]);
    }
    return out;
  }
}
