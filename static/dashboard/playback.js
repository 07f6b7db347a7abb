// Pause, slow motion and step for the live stream: every message of the page's websocket passes
// through here before it reaches the model.
//
// Guarantees:
// - Live at ×1 with nothing held, a message is handed on at once (the page is as live as before).
// - Paused, or held by the timeline, every message is kept in arrival order, nothing dropped,
//   and handed on later in that order.
// - Slow motion (×1/2, ×1/4, ×1/10) hands messages on at that fraction of the pace they came at:
//   a message that arrived t ms after the previous one follows it t/speed ms later (gaps longer
//   than MAX_GAP_MS count as MAX_GAP_MS, so an idle minute does not stall the replay).
// - Always back to live: at ×1, not paused, with messages held (after Resume, after slow motion,
//   after the timeline let go), it catches up: up to JUMP_AT held changes are handed on, in
//   order, spread over CATCH_UP_MS; more than that are handed on at once (a jump) and `onJump(n)`
//   says how many were not played one by one. Either way nothing is held CATCH_UP_MS later
//   unless the page is paused or slowed again.
// - `step()` hands on exactly one change that shows something (and the traffic and heartbeats
//   that came before it): heartbeats (a Lease renewed, a Node's status rewritten with nothing
//   drawn changed) never take a step of their own; a batch of changes is split, the rest stays held.
// - The revision to resume the socket from is the newest one received, never the one the model
//   shows (which is older while held, or a past revision while the timeline shows history).
// - Bounded: past LIMIT held changes (or MAX_ENTRIES held messages) the hold is dropped and the
//   socket asked for a fresh snapshot (as the dashboard's server does when a browser falls
//   behind): the page says so. A snapshot that arrives supersedes everything held before it.
// The one timer here paces slow motion and the catch-up; everything it hands on is drawn on the
// next frame.
export const SPEEDS = [1, 0.5, 0.25, 0.1];
export const CATCH_UP_MS = 1000;
export const JUMP_AT = 200;
const MAX_GAP_MS = 1000;
const TICK_MS = 50; // the catch-up hands on a share of what is held every TICK_MS
const LIMIT = 5_000;
const MAX_ENTRIES = 20_000;

function changeCount(message) {
  return message.t === "changes" ? message.items.length : 0;
}

function nodeKey(item) {
  return item.ns ? `${item.ns}/${item.name}` : item.name;
}

// Which changes only say "still here": Lease renewals, and a Node rewritten (its heartbeat in its
// status) with nothing the page draws of it changed. `views` remembers each Node as last handed on.
export class Heartbeats {
  constructor() {
    this.views = new Map(); // node name -> its view model as JSON
  }

  isHeartbeat(item) {
    if (item.resource === "leases") return true;
    return item.resource === "nodes" && item.type === "MODIFIED" && item.vm != null
      && this.views.get(nodeKey(item)) === JSON.stringify(item.vm);
  }

  // Remember the Nodes of a message handed on.
  note(message) {
    if (message.t === "snapshot") {
      this.views.clear();
      for (const vm of message.objects?.nodes || []) this.views.set(nodeKey(vm), JSON.stringify(vm));
    } else if (message.t === "changes") {
      for (const item of message.items) {
        if (item.resource !== "nodes") continue;
        if (item.type === "DELETED" || !item.vm) this.views.delete(nodeKey(item));
        else this.views.set(nodeKey(item), JSON.stringify(item.vm));
      }
    }
  }

  // How many items of `items` lead up to and include the first that shows something, and whether
  // there is one ({through: items.length, news: false} when all are heartbeats).
  throughFirstNews(items) {
    const saved = new Map(this.views);
    try {
      for (let i = 0; i < items.length; i += 1) {
        if (!this.isHeartbeat(items[i])) return { through: i + 1, news: true };
        this.note({ t: "changes", items: [items[i]] });
      }
      return { through: items.length, news: false };
    } finally {
      this.views = saved;
    }
  }
}

export class Playback {
  // `catchesUp`: the live stream catches up at ×1; a replay of the past (false) plays at its pace.
  constructor({ deliver, onChange, relist, onJump = () => {}, catchesUp = true, now = () => performance.now(),
                setTimer = (fn, ms) => setTimeout(fn, ms), clearTimer = (id) => clearTimeout(id) }) {
    this.deliver = deliver; // hands one message to the page (app.js's receive)
    this.onChange = onChange; // the badge and counts changed
    this.relist = relist; // ask the socket for a fresh snapshot
    this.onJump = onJump; // n changes were handed on at once to get back to live
    Object.assign(this, { catchesUp, now, setTimer, clearTimer });
    this.held = []; // {message, at}
    this.waiting = 0; // changes held
    this.paused = false;
    this.holding = false; // the timeline shows history: keep everything
    this.speed = 1;
    this.received = null; // the newest revision the socket sent
    this.timer = null;
    this.clockStart = 0; // wall time the paced replay (re)started
    this.heldStart = 0; // arrival time of the message played at clockStart
    this.catchUpBy = null; // wall time by which everything held is handed on (catching up)
    this.overflowed = 0;
    this.lastArrival = null;
    this.heartbeats = new Heartbeats();
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
      this.handOn(message);
      return;
    }
    if (message.t === "snapshot") this.supersede(); // a fresh state: what was held before it is in it
    this.held.push({ message, at });
    if (this.held.length === 1 && this.timer === null && quiet) this.restartClock();
    this.waiting += changeCount(message);
    if (this.waiting > LIMIT || this.held.length > MAX_ENTRIES) this.overflow();
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
    this.catchUpBy = null;
    this.onChange();
  }

  liveRevision() {
    return this.received;
  }

  supersede() {
    this.held = [];
    this.waiting = 0;
  }

  overflow() {
    this.overflowed += this.waiting;
    this.supersede();
    this.received = null;
    this.relist();
  }

  handOn(message) {
    this.heartbeats.note(message);
    this.deliver(message);
  }

  // --- the switches ------------------------------------------------------------------------

  pause() {
    this.paused = true;
    this.catchUpBy = null;
    this.stopTimer();
    this.onChange();
  }

  resume() {
    this.paused = false;
    this.restart();
  }

  setSpeed(speed) {
    this.speed = SPEEDS.includes(speed) ? speed : 1;
    this.restart();
  }

  hold(holding) {
    this.holding = holding;
    if (holding) {
      this.catchUpBy = null;
      this.stopTimer();
      this.onChange();
    } else this.restart();
  }

  // The pace changed: slowed, it goes on from here at the new pace; at ×1 it catches up.
  restart() {
    this.stopTimer();
    this.catchUpBy = null;
    this.restartClock();
    this.schedule(); // at ×1 with messages held, this starts the catch-up
    this.onChange();
  }

  // Hand on one change that shows something (and what came before it). Returns it, or null.
  step() {
    this.catchUpBy = null;
    while (this.held.length) {
      const entry = this.held[0];
      const { message } = entry;
      if (message.t !== "changes") {
        this.held.shift();
        this.handOn(message);
        continue;
      }
      const { through, news } = this.heartbeats.throughFirstNews(message.items);
      if (through >= message.items.length) this.held.shift();
      else entry.message = { ...message, items: message.items.slice(through) };
      this.waiting -= through;
      const items = message.items.slice(0, through);
      const last = items[items.length - 1];
      this.handOn(through === message.items.length ? message
        : { t: "changes", items, revision: last.rv, replayed: true });
      if (news) return this.done(last);
    }
    this.onChange();
    return null;
  }

  done(item) {
    this.restartClock();
    this.onChange();
    return item;
  }

  // Hand on everything held, now (back to live). Returns how many changes it handed on.
  flush() {
    const held = this.held;
    const count = this.waiting;
    this.held = [];
    this.waiting = 0;
    this.catchUpBy = null;
    this.stopTimer();
    for (const { message } of held) this.handOn(message);
    this.onChange();
    return count;
  }

  // --- the paced replay and the catch-up ---------------------------------------------------

  catching() {
    return this.catchesUp && !this.paused && !this.holding && this.speed === 1 && this.held.length > 0;
  }

  startCatchUp() {
    if (this.waiting > JUMP_AT) {
      this.onJump(this.flush());
      return;
    }
    this.catchUpBy = this.now() + CATCH_UP_MS;
  }

  restartClock() {
    this.clockStart = this.now();
    this.heldStart = this.held.length ? this.held[0].at : this.clockStart;
  }

  stopTimer() {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
  }

  // When the next held message is due, at the chosen speed (its arrival gap, capped, / speed).
  dueIn(entry, previousAt) {
    const gap = Math.min(Math.max(entry.at - previousAt, 0), MAX_GAP_MS);
    return gap / this.speed;
  }

  schedule() {
    if (this.paused || this.holding || this.timer !== null || !this.held.length) return;
    if (this.catching() && this.catchUpBy === null) this.startCatchUp(); // behind at ×1: catch up
    if (!this.held.length) return;
    const wait = this.catchUpBy !== null ? Math.min(TICK_MS, Math.max(0, this.catchUpBy - this.now()))
      : this.dueIn(this.held[0], this.heldStart) - (this.now() - this.clockStart);
    this.timer = this.setTimer(() => this.tick(), Math.max(0, wait));
  }

  tick() {
    this.timer = null;
    if (this.paused || this.holding || !this.held.length) return;
    if (this.catchUpBy !== null) this.catchUp();
    else this.playNext();
    if (!this.held.length) this.catchUpBy = null;
    this.schedule();
    this.onChange();
  }

  // Catching up: a share of what is held, so that all of it is handed on by `catchUpBy`.
  catchUp() {
    const left = this.catchUpBy - this.now();
    const count = left <= 0 ? this.held.length : Math.ceil(this.held.length * Math.min(1, TICK_MS / left));
    for (const { message } of this.held.splice(0, count)) {
      this.waiting -= changeCount(message);
      this.handOn({ ...message, replayed: true });
    }
  }

  playNext() {
    const { message, at } = this.held.shift();
    this.waiting -= changeCount(message);
    this.handOn({ ...message, replayed: true });
    this.clockStart = this.now();
    this.heldStart = at;
  }

  // What the badge says: "live", "paused", "slow" or "catching-up" (handing on held messages at ×1).
  state() {
    if (this.paused) return "paused";
    if (this.speed !== 1) return "slow";
    if (this.held.length) return this.catchesUp ? "catching-up" : "replay";
    return "live";
  }
}
