// The stage bar (static/dashboard/timeline.js): pause, slow motion and the scrubber always come
// back to live, on a fake document (fakedom.mjs), a fake clock and a fake hub (fetch), run with
// `node --test` (tests/dashboard/test_narration_js.py runs every file here in the pytest suite).
import assert from "node:assert/strict";
import { test } from "node:test";
import { frames, installDocument } from "./fakedom.mjs";
import { FakeTime } from "./faketime.mjs";
import { pageModule } from "./page.mjs";

const document = installDocument({ terms: {}, ui: { "tl-waiting": "{n} waiting", "tl-at": "at revision {rv}",
  "tl-gone": "gone; oldest {oldest}", "tl-jumped": "{n} at once" }, status: {} });
document.body.dataset.snapshotKinds = JSON.stringify(["pods", "configmaps", "events", "horizontalpodautoscalers"]);
const { Timeline } = await pageModule("timeline.js");
const { Model } = await pageModule("model.js");
const { JUMP_AT } = await pageModule("playback.js");

class VersionLog {
  constructor() {
    this.ring = { capacity: 100, items: [], newest: (n) => this.ring.items.slice(-n).reverse() };
  }

  clear() {
    this.ring.items = [];
  }

  add(items) {
    this.ring.items.push(...items);
  }
}

const pod = (name) => ({ key: `default/${name}`, name, ns: "default" });
const changes = (rv, name) => ({ t: "changes", revision: rv, items: [{ rv, type: "ADDED", resource: "pods", ns: "default",
  name, vm: pod(name) }] });

function stage() {
  const time = new FakeTime();
  const model = new Model();
  const drawn = [];
  const receive = (message) => {
    drawn.push(message);
    if (message.t === "snapshot") model.loadSnapshot(message);
    else if (message.t === "changes") model.applyChanges(message);
  };
  const timeline = new Timeline({ model, versionLog: new VersionLog(), receive, redraw: () => {}, time });
  receive({ t: "snapshot", revision: 1, objects: { pods: [] } });
  timeline.live.offer({ t: "snapshot", revision: 1, objects: { pods: [] } });
  frames.run();
  return { time, model, drawn, timeline, el: timeline.el };
}

test("live at ×1 a change is drawn at once and the badge says live", () => {
  const { model, timeline, el } = stage();
  timeline.offer(changes(2, "a"));
  frames.run();
  assert.equal(model.objects.pods.has("default/a"), true);
  assert.equal(el.badge.dataset.state, "live");
  assert.equal(el.back.disabled, true);
});

test("pause holds and counts what waits; resume catches up and is live again", () => {
  const { time, model, timeline, el } = stage();
  el.pause.click();
  for (let rv = 2; rv < 12; rv += 1) timeline.offer(changes(rv, `p${rv}`));
  frames.run();
  assert.equal(el.badge.dataset.state, "paused");
  assert.equal(el.waiting.textContent, "10 waiting");
  assert.equal(model.objects.pods.size, 0);
  assert.equal(el.back.disabled, false);
  el.pause.click();
  time.advance(2000);
  frames.run();
  assert.equal(model.objects.pods.size, 10);
  assert.equal(el.badge.dataset.state, "live");
  assert.equal(el.waiting.textContent, "");
});

test("slow motion, then Live: everything held is drawn and nothing waits any more", () => {
  const { time, model, timeline, el } = stage();
  el.speed.value = "0.1";
  el.speed.dispatch("change");
  for (let rv = 2; rv < 2 + JUMP_AT + 40; rv += 1) {
    timeline.offer(changes(rv, `s${rv}`));
    time.advance(100);
  }
  frames.run();
  assert.equal(el.badge.dataset.state, "slow");
  assert.ok(model.objects.pods.size < JUMP_AT);
  el.back.click();
  time.advance(10);
  frames.run();
  assert.equal(model.objects.pods.size, JUMP_AT + 40);
  assert.equal(el.badge.dataset.state, "live");
  assert.equal(el.speed.value, "1");
  assert.equal(timeline.live.waiting, 0);
});

test("the scrubber shows the past, holds the live stream, and Live puts back the live state", async () => {
  const { model, timeline, el } = stage();
  timeline.offer(changes(2, "now"));
  globalThis.fetch = async (url) => {
    assert.match(url, /at\/\?revision=1$/);
    return { ok: true, status: 200, json: async () => ({ t: "snapshot", revision: 1, time: 0, objects: { pods: [pod("then")] } }) };
  };
  el.range.value = "1";
  const shown = timeline.goTo(1);
  await new Promise((resolve) => setImmediate(resolve));
  frames.run();
  await shown;
  assert.deepEqual([...model.objects.pods.keys()], ["default/then"]);
  assert.equal(el.badge.dataset.state, "replay");
  assert.equal(el.label.textContent, "at revision 1");
  timeline.offer(changes(3, "later")); // arrives while the past is shown: held, not drawn
  assert.equal(model.objects.pods.has("default/later"), false);
  el.back.click();
  frames.run();
  assert.deepEqual([...model.objects.pods.keys()].sort(), ["default/later", "default/now"]);
  assert.equal(el.badge.dataset.state, "live");
});

test("a revision before the window leaves the page as it was and offers the oldest kept", async () => {
  const { model, timeline, el } = stage();
  timeline.offer(changes(2, "now"));
  globalThis.fetch = async () => ({ ok: false, status: 410, statusText: "Gone",
    json: async () => ({ message: "too old resource version: 1 (40)" }) });
  await timeline.goTo(1);
  frames.run();
  assert.deepEqual([...model.objects.pods.keys()], ["default/now"]);
  assert.equal(el.badge.dataset.state, "live");
  assert.match(el.message.textContent, /gone; oldest 40/);
});
