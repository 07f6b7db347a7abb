// The stage bar: pause, slow motion and step for the live stream, and a timeline scrubber over
// the hub's retained version log (or over a recording file).
//
// Guarantees:
// - Every message of the live socket goes through the live Playback (playback.js): paused or
//   slowed, nothing is lost; the bar says how many changes wait, and a badge says "paused",
//   "slow motion", "catching up" or "replay" whenever what is drawn is not the live state as it
//   arrives (and `onBadge(badge)` hears it, so the page's header never says "live" meanwhile).
//   "Live" is enabled then, and brings the live state at once (saying how many changes it drew
//   at once when it jumped); back at ×1 and not paused the live stream catches up by itself.
// - Dragging the scrubber to revision N draws every panel from the hub's state at N (the
//   dashboard's /timeline/at/, built from the version log), labelled "at revision N, HH:MM:SS —
//   replay". Meanwhile the live socket keeps receiving, held; "Live" puts back the live state as it
//   was left and hands on everything held since, in order.
// - "Play from here" replays the changes after N, read from the log (/timeline/changes/), at the
//   chosen speed; pause and step act on that replay.
// - A revision before the window (410) leaves the page as it was and says the history is gone,
//   offering the oldest revision kept.
// - One request for a state at a time: while one is out, only the newest position asked for is
//   remembered and asked next, so dragging never queues stale reads.
import { onNextFrame } from "./frame.js";
import { Playback, SPEEDS } from "./playback.js";
import { RecordingSource, download, parseRecording, withTraffic } from "./recording.js";
import { clockTime, ui } from "./words.js";

const TRAFFIC_KEEP = 5000; // traffic batches kept for a recording
const PAGE = 2000;
const JUMP_SAID_MS = 6000;

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));
}

function speedText(speed) {
  return speed === 1 ? "×1" : `×1/${Math.round(1 / speed)}`;
}

// An answer of the dashboard's timeline views: the JSON, or an Error carrying the hub's Status.
async function fetchJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({ message: response.statusText }));
  if (!response.ok) {
    const error = new Error(body.message || String(response.status));
    error.code = response.status;
    const oldest = /\((\d+)\)\s*$/.exec(body.message || "");
    if (response.status === 410 && oldest) error.oldest = Number(oldest[1]);
    throw error;
  }
  return body;
}

class HubSource {
  constructor(base) {
    this.base = base;
    this.name = "";
  }

  at(revision) {
    return fetchJson(`${this.base}at/?revision=${revision}`);
  }

  async after(revision) {
    const out = [];
    for (let from = revision; ;) {
      const page = await fetchJson(`${this.base}changes/?revision=${from}&limit=${PAGE}`);
      for (const item of page.items) {
        out.push({ message: { t: "changes", items: [item], revision: item.rv }, at: (item.time ?? 0) * 1000, rv: item.rv });
      }
      if (!page.more || !page.items.length) return out;
      from = page.revision;
    }
  }
}

export class Timeline {
  // `time` ({now, setTimer, clearTimer}) is the players' clock: the page's own by default, a fake
  // one in the tests.
  constructor({ model, versionLog, receive, redraw, time = {} }) {
    this.model = model;
    this.time = { setTimer: (fn, ms) => setTimeout(fn, ms), ...time };
    this.versionLog = versionLog;
    this.receive = receive;
    this.redraw = redraw;
    this.base = (document.body.dataset.timelineAt || "/timeline/at/").replace(/at\/$/, ""); // the views' folder
    this.hub = new HubSource(this.base);
    this.source = null; // null: live; else where the history comes from (the hub, or a recording)
    this.saved = null; // the live state, kept while history is shown
    this.position = null; // {revision, time} shown
    this.asking = null; // a state request out
    this.next = null; // the newest position asked for meanwhile
    this.traffic = [];
    this.message = "";
    this.offerOldest = null; // the oldest revision kept, offered after a 410
    const changed = () => onNextFrame(() => this.render());
    this.live = new Playback({ deliver: (m) => this.receive(m), onChange: changed, relist: () => this.relist(),
      onJump: (n) => this.jumped(n), ...time });
    this.replay = new Playback({ deliver: (m) => this.replayed(m), onChange: changed, relist: () => {}, catchesUp: false,
      ...time });
    this.el = Object.fromEntries(["badge", "waiting", "pause", "step", "speed", "range", "label", "play", "back",
      "export", "load", "message"].map((id) => [id, document.getElementById(`tl-${id}`)]));
    this.wire();
    this.render();
  }

  // --- the live stream ---------------------------------------------------------------------

  offer(message) {
    if (message.t === "traffic") {
      this.traffic.push({ rv: this.live.liveRevision(), at: Date.now(), records: message.records });
      if (this.traffic.length > TRAFFIC_KEEP) this.traffic.splice(0, this.traffic.length - TRAFFIC_KEEP);
    }
    this.live.offer(message);
  }

  liveRevision() {
    return this.live.liveRevision();
  }

  say(message, oldest = null) {
    this.message = message;
    this.offerOldest = oldest;
  }

  relist() {
    this.say(fill(ui("tl-overflow"), { n: this.live.overflowed }));
    window.kubeKitchen?.live?.watch(null);
  }

  // The live stream was too far behind to replay: n changes were drawn at once. Said for a few
  // seconds (it floats over the narration), unless something else is said meanwhile.
  jumped(n) {
    if (!n) return;
    const text = fill(ui("tl-jumped"), { n });
    this.say(text);
    this.time.setTimer(() => {
      if (this.message !== text) return;
      this.say("");
      this.render();
    }, JUMP_SAID_MS);
  }

  active() {
    return this.source ? this.replay : this.live;
  }

  // --- history -----------------------------------------------------------------------------

  // Show the state at `revision`; resolves once it is drawn (or refused).
  goTo(revision, source = this.source || this.hub) {
    this.next = { revision, source };
    if (!this.asking) this.asking = this.askNext();
    return this.asking;
  }

  async askNext() {
    try {
      while (this.next) {
        const { revision, source } = this.next;
        this.next = null;
        try {
          const state = await source.at(revision);
          if (this.next) continue; // the scrubber moved on meanwhile
          this.show(state, source);
          await new Promise((resolve) => onNextFrame(resolve)); // after the page's draw, in the same frame
        } catch (error) {
          this.refused(error);
        }
      }
    } finally {
      this.asking = null;
    }
  }

  show(state, source) {
    if (!this.saved) {
      this.saved = { model: this.model.save(), log: this.versionLog.ring.newest(this.versionLog.ring.capacity) };
      this.live.hold(true);
    }
    this.source = source;
    this.replay.drop();
    this.say("");
    this.position = { revision: state.revision, time: state.time };
    this.window = state.window || this.window;
    this.receive({ ...state, spokes: state.spokes || this.saved.model.spokes, replayed: true });
    this.render();
  }

  refused(error) {
    if (error.oldest !== undefined) this.say(fill(ui("tl-gone"), { oldest: error.oldest }), error.oldest);
    else this.say(fill(ui("tl-failed"), { message: error.message }));
    this.render();
  }

  // A change of the replay: drawn, and the position follows it.
  replayed(message) {
    this.receive({ ...message, replayed: true });
    if (message.t === "changes" && message.items.length) {
      const item = message.items[message.items.length - 1];
      this.position = { revision: item.rv, time: item.time ?? this.position?.time };
    }
  }

  async playFrom() {
    if (!this.source || !this.position) return;
    const source = this.source;
    this.replay.drop();
    let entries;
    try {
      entries = await source.after(this.position.revision);
    } catch (error) {
      this.refused(error); // compacted meanwhile (410): the page says so and offers the oldest kept
      return;
    }
    if (this.source !== source) return;
    for (const { message, at } of entries) this.replay.enqueue(message, at);
    this.render();
  }

  backToLive() {
    this.replay.drop();
    if (this.saved) {
      this.model.restore(this.saved.model);
      this.versionLog.clear();
      this.versionLog.add([...this.saved.log].reverse());
    }
    this.saved = null;
    this.source = null;
    this.position = null;
    this.say("");
    this.redraw();
    // "Live" is the live state as it arrives: not paused, not slowed, nothing held any more.
    this.live.paused = false;
    this.live.speed = 1;
    this.replay.speed = 1;
    this.el.speed.value = "1";
    this.live.holding = false;
    this.jumped(this.live.flush());
  }

  // --- recordings --------------------------------------------------------------------------

  async exportRecording() {
    try {
      const recording = withTraffic(await fetchJson(`${this.base}recording/`), this.traffic);
      const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
      download(recording, `kube-kitchen-${stamp}.json`);
      this.say(fill(ui("tl-exported"), { n: recording.changes.length }));
    } catch (error) {
      this.say(fill(ui("tl-failed"), { message: error.message }));
    }
    this.render();
  }

  async loadRecording(file) {
    try {
      const source = new RecordingSource(parseRecording(await file.text()), file.name);
      await this.goTo(source.oldest, source);
      this.window = source.window();
    } catch (error) {
      this.say(error.message); // the page stays as it was: live, or the history it showed
    }
    this.render();
  }

  // --- the bar -----------------------------------------------------------------------------

  async refreshWindow() {
    if (this.source) return;
    const revision = this.live.liveRevision();
    if (revision === null) return;
    try {
      this.window = (await fetchJson(`${this.base}changes/?revision=${revision}&limit=1`)).window;
      this.render();
    } catch {
      // no window known: the scrubber keeps the one it had
    }
  }

  wire() {
    const { el } = this;
    el.pause.addEventListener("click", () => {
      const player = this.active();
      if (player.paused) player.resume();
      else player.pause();
    });
    el.step.addEventListener("click", () => {
      const player = this.active();
      if (!player.paused) player.pause();
      player.step();
    });
    el.speed.replaceChildren(...SPEEDS.map((speed) => new Option(speedText(speed), String(speed))));
    el.speed.addEventListener("change", () => {
      const speed = Number(el.speed.value);
      this.live.setSpeed(speed);
      this.replay.setSpeed(speed);
    });
    el.range.addEventListener("pointerdown", () => this.refreshWindow());
    el.range.addEventListener("focus", () => this.refreshWindow());
    el.range.addEventListener("input", () => this.goTo(Number(el.range.value)));
    el.play.addEventListener("click", () => this.playFrom());
    el.back.addEventListener("click", () => this.backToLive());
    el.export.addEventListener("click", () => this.exportRecording());
    el.load.addEventListener("change", () => {
      if (el.load.files.length) this.loadRecording(el.load.files[0]);
      el.load.value = "";
    });
    el.message.addEventListener("click", (event) => {
      if (event.target.closest("[data-oldest]")) this.goTo(Number(event.target.closest("[data-oldest]").dataset.oldest));
    });
  }

  badge() {
    if (this.source) return { state: "replay", text: ui("tl-replay") };
    const state = this.live.state();
    if (state === "slow") return { state, text: fill(ui("tl-slow"), { speed: speedText(this.live.speed) }) };
    return { state, text: ui({ live: "tl-live", paused: "tl-paused", "catching-up": "tl-catching-up" }[state] || "tl-replay") };
  }

  render() {
    const { el } = this;
    const player = this.active();
    const badge = this.badge();
    document.body.dataset.playback = badge.state;
    el.badge.dataset.state = badge.state;
    el.badge.textContent = badge.text;
    el.waiting.textContent = player.waiting ? fill(ui("tl-waiting"), { n: player.waiting }) : "";
    el.pause.textContent = ui(player.paused ? "tl-resume" : "tl-pause");
    el.pause.setAttribute("aria-pressed", String(player.paused));
    el.play.disabled = !this.source;
    el.back.disabled = !this.source && badge.state === "live"; // whatever is not live can go back to it
    this.onBadge?.(badge);
    el.export.disabled = Boolean(this.source);
    const newest = this.source ? this.window?.newest : this.live.liveRevision();
    const oldest = this.window?.oldest ?? 0;
    if (newest !== null && newest !== undefined) {
      el.range.min = String(Math.min(oldest, newest));
      el.range.max = String(newest);
    }
    if (this.position) {
      if (document.activeElement !== el.range || !this.asking) el.range.value = String(this.position.revision);
      const time = this.position.time ? clockTime(new Date(this.position.time * 1000)) : "—";
      const where = this.source?.name ? `${this.source.name} · ` : "";
      el.label.textContent = where + fill(ui("tl-at"), { rv: this.position.revision, time });
    } else {
      if (newest !== null && newest !== undefined) el.range.value = String(newest);
      el.label.textContent = "";
    }
    el.message.replaceChildren();
    if (this.message) {
      el.message.append(this.message);
      if (this.offerOldest !== null) {
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.oldest = String(this.offerOldest);
        button.textContent = fill(ui("tl-oldest"), { oldest: this.offerOldest });
        el.message.append(" ", button);
      }
    }
  }
}
