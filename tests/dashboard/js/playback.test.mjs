// The stage bar's player (static/dashboard/playback.js), run with `node --test` on a fake clock and
// fake timers (tests/dashboard/test_narration_js.py runs every file here in the pytest suite).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { FakeTime } from "./faketime.mjs";

const source = readFileSync(new URL("../../../static/dashboard/playback.js", import.meta.url), "utf8");
const { Playback, Heartbeats, CATCH_UP_MS, JUMP_AT } = await import(
  `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

let rv = 0;
const pod = (name) => ({ rv: ++rv, type: "ADDED", resource: "pods", kind: "Pod", ns: "default", name, actor: "kubectl",
  vm: { name, ns: "default" } });
const node = (name, vm) => ({ rv: ++rv, type: "MODIFIED", resource: "nodes", kind: "Node", ns: "", name,
  actor: `kubelet/${name}`, vm: { key: name, ns: "", name, ready: true, unschedulable: false, ...vm } });
const lease = (name) => ({ rv: ++rv, type: "MODIFIED", resource: "leases", kind: "Lease", ns: "kube-node-lease", name,
  actor: `kubelet/${name}`, vm: null });
const changes = (...items) => ({ t: "changes", items, revision: items[items.length - 1].rv });
const traffic = () => ({ t: "traffic", records: [{ type: "request", who: "kubectl", verb: "get", code: 200 }] });

// The revisions from `first` to the newest made, in order.
const since = (first) => [...Array(rv - first + 1).keys()].map((i) => i + first);

function player() {
  const time = new FakeTime();
  const delivered = [];
  const jumps = [];
  const playback = new Playback({ deliver: (m) => delivered.push(m), onChange: () => {}, relist: () => {},
    onJump: (n) => jumps.push(n), now: time.now, setTimer: time.setTimer, clearTimer: time.clearTimer });
  const items = () => delivered.filter((m) => m.t === "changes").flatMap((m) => m.items);
  return { time, delivered, jumps, playback, items };
}

// Changes arriving every `every` ms for `ms` ms, with traffic between them.
function stream(time, playback, ms, every = 250) {
  for (let t = 0; t < ms; t += every) {
    playback.offer(changes(pod(`p${rv}`)));
    playback.offer(traffic());
    time.advance(every);
  }
}

test("live at x1 hands every message on at once", () => {
  const { playback, delivered } = player();
  playback.offer(changes(pod("a")));
  assert.equal(delivered.length, 1);
  assert.equal(playback.state(), "live");
});

test("after a minute of x1/10, back at x1 the page is live again within 2 s and said how many it jumped", () => {
  const { time, playback, jumps, items } = player();
  const first = rv + 1;
  playback.setSpeed(0.1);
  stream(time, playback, 60_000);
  assert.ok(playback.waiting > JUMP_AT, `only ${playback.waiting} waiting`);
  const sent = rv;
  playback.setSpeed(1);
  stream(time, playback, 2_000);
  assert.equal(playback.state(), "live");
  assert.equal(playback.held.length, 0);
  assert.deepEqual(items().map((item) => item.rv), since(first), "every change handed on, in order");
  assert.equal(jumps.length, 1);
  assert.ok(jumps[0] > JUMP_AT && jumps[0] <= sent);
});

test("pause then resume catches up, in order, within CATCH_UP_MS, while changes keep coming", () => {
  const { time, playback, jumps, items } = player();
  const first = rv + 1;
  playback.pause();
  stream(time, playback, 15_000, 250); // 60 changes held
  assert.equal(playback.waiting, 60);
  playback.resume();
  assert.equal(playback.state(), "catching-up");
  stream(time, playback, CATCH_UP_MS + 250, 125);
  assert.equal(playback.state(), "live");
  assert.deepEqual(jumps, [], "a short backlog is played, not jumped");
  assert.deepEqual(items().map((item) => item.rv), since(first));
});

test("slow motion plays at its pace and the held queue is bounded", () => {
  const relists = [];
  const time = new FakeTime();
  const playback = new Playback({ deliver: () => {}, onChange: () => {}, relist: () => relists.push(1),
    now: time.now, setTimer: time.setTimer, clearTimer: time.clearTimer });
  playback.pause();
  for (let i = 0; i < 6000; i += 1) playback.offer(changes(pod(`b${i}`)));
  assert.ok(playback.waiting <= 5000);
  assert.equal(relists.length, 1);
});

test("a snapshot supersedes what was held before it", () => {
  const { playback } = player();
  playback.pause();
  playback.offer(changes(pod("old")));
  playback.offer({ t: "snapshot", revision: rv, objects: {} });
  assert.equal(playback.waiting, 0);
  assert.equal(playback.held.length, 1);
});

test("a replay of the past is not caught up: it plays at its own pace", () => {
  const time = new FakeTime();
  const delivered = [];
  const replay = new Playback({ deliver: (m) => delivered.push(m), onChange: () => {}, relist: () => {},
    catchesUp: false, now: time.now, setTimer: time.setTimer, clearTimer: time.clearTimer });
  replay.enqueue(changes(pod("r1")), 0);
  replay.enqueue(changes(pod("r2")), 800);
  time.advance(10);
  assert.equal(delivered.length, 1);
  assert.equal(replay.state(), "replay");
  time.advance(800);
  assert.equal(delivered.length, 2);
});

test("heartbeats never take a step: a step hands on them and the next change that shows something", () => {
  const { playback, items } = player();
  playback.offer({ t: "snapshot", revision: rv, objects: { nodes: [{ key: "node-1", ns: "", name: "node-1", ready: true,
    unschedulable: false }] } });
  playback.pause();
  playback.offer(changes(lease("node-1")));
  playback.offer(changes(node("node-1", {}), lease("node-2")));
  playback.offer(traffic());
  const news = pod("news");
  playback.offer(changes(node("node-1", {}), news, pod("later")));
  const stepped = playback.step();
  assert.equal(stepped.name, "news");
  assert.equal(items()[items().length - 1].name, "news");
  assert.equal(playback.waiting, 1, "the change after it stays held");
  assert.equal(playback.step().name, "later");
  assert.equal(playback.step(), null);
});

test("a Node whose drawn state changed is news, and takes a step", () => {
  const { playback } = player();
  playback.offer({ t: "snapshot", revision: rv, objects: { nodes: [{ key: "node-1", ns: "", name: "node-1", ready: true,
    unschedulable: false }] } });
  playback.pause();
  playback.offer(changes(node("node-1", { ready: false })));
  assert.equal(playback.step().vm.ready, false);
  const beats = new Heartbeats();
  assert.ok(beats.isHeartbeat(lease("x")));
  assert.ok(!beats.isHeartbeat(node("unknown", {})), "a Node never seen is news");
});
