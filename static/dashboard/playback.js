// Pause, slow motion and step for the live stream: every message of the page's websocket passes
// through here before it reaches the model.
//
// Guarantees:
// - Live at ×1 with nothing held, a message is handed on at once (the page is as live as before).
// - Paused, or held by the timeline, every message is kept in arrival order, nothing dropped,
//   and handed on later in that order: on resume at the chosen speed, all at once on `flush`.
// - Slow motion (×1/2, ×1/4, ×1/10) hands messages on at that fraction of the pace they came at:
//   a message that arrived t ms after the previous one follows it t/speed ms later (gaps longer
//   than MAX_GAP_MS count as MAX_GAP_MS, so an idle minute does not stall the replay).
// - `step()` hands on exactly one change (and the traffic that came before it); a batch of
//   changes is split, the rest stays held.
// - The revision to resume the socket from is the newest one received, never the one the model
//   shows (which is older while held, or a past revision while the timeline shows history).
// - Bounded: past LIMIT held changes the hold is dropped and the socket asked for a fresh
//   snapshot (as the dashboard's server does when a browser falls behind): the page says so.
// The one timer here paces slow motion; everything it hands on is drawn on the next frame.
export const SPEEDS = [1, 0.5, 0.25, 0.1];
const MAX_GAP_MS = 1000;
const LIMIT = 50_000;

function changeCount(message) {
  return message.t === "changes" ? message.items.length : 0;
}

export class Playback {
  constructor({ deliver, onChange, relist, now = () => performance.now() }) {
    this.deliver = deliver; // hands one message to the page (app.js's receive)
    this.onChange = onChange; // the badge and counts changed
    this.relist = relist; // ask the socket for a fresh snapshot
    this.now = now;
    this.held = []; // {message, at}
    this.waiting = 0; // changes held
    this.paused = false;
    this.holding = false; // the timeline shows history: keep everything
    this.speed = 1;
    this.received = null; // the newest revision the socket sent
    this.timer = null;
    this.clockStart = 0; // wall time the paced replay (re)started
    this.heldStart = 0; // arrival time of the message played at clockStart
    this.overflowed = 0;
    this.lastArrival = null;
  }

  // --- from the socket ---------------------------------------------------------------------

  offer(message) {
    if (message.t === "snapshot") this.received = message.revision;
    else if (message.t === "changes" && message.revision) this.received = Math.max(this.received ?? 0, message.revision);
    else if (message.t === "expired") this.received = null;
    const at = this.now();
    // The first message after a quiet spell (no message for MAX_GAP_MS) plays at once; one that
    // follows another closely keeps its gap, slowed, from when that one was played.
    const quiet = this.lastArrival === null || at - this.lastArrival > MAX_GAP_MS;
    this.lastArrival = at;
    if (!this.paused && !this.holding && this.speed === 1 && !this.held.length) {
      this.deliver(message);
      return;
    }
    this.held.push({ message, at });
    if (this.held.length === 1 && this.timer === null && quiet) this.restartClock();
    this.waiting += changeCount(message);
    if (this.waiting > LIMIT) this.overflow();
    this.schedule();
    this.onChange();
  }

  // For a replay of the past: hold `message` as if it had arrived at `at` (ms), never pass it on at once.
  enqueue(message, at) {
    this.held.push({ message, at });
    this.waiting += changeCount(message);
    if (this.held.length === 1) this.restartClock();
    this.schedule();
  }

  // Forget everything held (a replay abandoned).
  drop() {
    this.stopTimer();
    this.held = [];
    this.waiting = 0;
    this.onChange();
  }

  liveRevision() {
    return this.received;
  }

  overflow() {
    this.overflowed += this.waiting;
    this.held = [];
    this.waiting = 0;
    this.received = null;
    this.relist();
  }

  // --- the switches ------------------------------------------------------------------------

  pause() {
    this.paused = true;
    this.stopTimer();
    this.onChange();
  }

  resume() {
    this.paused = false;
    this.restartClock();
    this.schedule();
    this.onChange();
  }

  setSpeed(speed) {
    this.speed = SPEEDS.includes(speed) ? speed : 1;
    this.restartClock();
    this.schedule();
    this.onChange();
  }

  hold(holding) {
    this.holding = holding;
    if (holding) this.stopTimer();
    else {
      this.restartClock();
      this.schedule();
    }
    this.onChange();
  }

  // Hand on one change (and what came before it). Returns the change handed on, or null.
  step() {
    while (this.held.length) {
      const entry = this.held[0];
      const { message } = entry;
      if (message.t !== "changes" || message.items.length <= 1) {
        this.held.shift();
        this.waiting -= changeCount(message);
        this.deliver(message);
        if (changeCount(message) === 1) return this.done(message.items[0]);
        continue;
      }
      const [first, ...rest] = message.items;
      entry.message = { ...message, items: rest };
      this.waiting -= 1;
      this.deliver({ t: "changes", items: [first], revision: first.rv, replayed: true });
      return this.done(first);
    }
    this.onChange();
    return null;
  }

  done(item) {
    this.restartClock();
    this.onChange();
    return item;
  }

  // Hand on everything held, now (back to live).
  flush() {
    const held = this.held;
    this.held = [];
    this.waiting = 0;
    for (const { message } of held) this.deliver(message);
    this.onChange();
  }

  // --- the paced replay --------------------------------------------------------------------

  restartClock() {
    this.clockStart = this.now();
    this.heldStart = this.held.length ? this.held[0].at : this.clockStart;
  }

  stopTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  // When the next held message is due, at the chosen speed (its arrival gap, capped, / speed).
  dueIn(entry, previousAt) {
    const gap = Math.min(Math.max(entry.at - previousAt, 0), MAX_GAP_MS);
    return gap / this.speed;
  }

  schedule() {
    if (this.paused || this.holding || this.timer !== null || !this.held.length) return;
    const wait = this.dueIn(this.held[0], this.heldStart) - (this.now() - this.clockStart);
    this.timer = setTimeout(() => this.tick(), Math.max(0, wait));
  }

  tick() {
    this.timer = null;
    if (this.paused || this.holding || !this.held.length) return;
    const { message, at } = this.held.shift();
    this.waiting -= changeCount(message);
    this.deliver(this.held.length || this.speed !== 1 ? { ...message, replayed: true } : message);
    this.clockStart = this.now();
    this.heldStart = at;
    this.schedule();
    this.onChange();
  }

  // What the badge says: "live", "paused", "slow" or "replay" (playing held messages at ×1).
  state() {
    if (this.paused) return "paused";
    if (this.speed !== 1) return "slow";
    if (this.held.length) return "replay";
    return "live";
  }
}
