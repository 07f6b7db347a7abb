// Time that moves only when told to, and the timers that fire as it passes them: the clock the
// page's players take in the node tests (playback.test.mjs, timeline.test.mjs).
export class FakeTime {
  constructor() {
    this.ms = 0;
    this.timers = new Map();
    this.next = 1;
  }

  now = () => this.ms;

  setTimer = (fn, ms) => {
    const id = this.next++;
    this.timers.set(id, { at: this.ms + ms, fn });
    return id;
  };

  clearTimer = (id) => this.timers.delete(id);

  advance(ms) {
    const until = this.ms + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.ms = Math.max(this.ms, due[1].at);
      due[1].fn();
    }
    this.ms = until;
  }
}
