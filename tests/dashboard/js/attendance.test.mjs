// The attendees' board as data (static/dashboard/attendance.js), run with `node --test`
// (tests/dashboard/test_narration_js.py runs every *.test.mjs here in the pytest suite).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const source = readFileSync(new URL("../../../static/dashboard/attendance.js", import.meta.url), "utf8");
const { Attendance, MAX_ERRORS, WINDOW_S } = await import(
  `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

// The page's rules, as failures.js and panels.js state them (a 404 to a lookup is no error).
const isError = (r) => r.code >= 400 && !(r.code === 404 && r.verb === "get" && r.name);
const failing = (s) => ["CrashLoopBackOff", "ImagePullBackOff", "Error", "OOMKilled"].includes(s);
const request = (user, ts, code = 200, extra = {}) => ({ type: "request", who: "kubectl", user, ts, code, verb: "list", ...extra });
const board = () => new Attendance(["alice", "bob"], { isError, failing });

test("each attendee's requests: the last one's time, errors with the last message", () => {
  const a = board();
  assert.equal(a.add([request("alice", 100), request("alice", 105, 403, { message: "pods is forbidden", reason: "Forbidden" }),
    request("alice", 110), request("bob", 107, 409, { reason: "Conflict" })]), true);
  const [alice, bob] = a.rows([]);
  assert.deepEqual([alice.name, alice.last, alice.errors, alice.lastError.message, alice.lastError.code],
    ["alice", 110, 1, "pods is forbidden", 403]);
  assert.deepEqual([bob.last, bob.errors, bob.lastError.message], [107, 1, "Conflict"]); // no message: the reason
});

test("requests of anyone not on the board, watch records and lookups' 404 change nothing", () => {
  const a = board();
  assert.equal(a.add([request("kubernetes-admin", 100), request("", 101, 401),
    { type: "watch", who: "kubectl", user: "alice", ts: 102, count: 3 }]), false);
  a.add([request("alice", 103, 404, { verb: "get", name: "web" })]);
  const [alice, bob] = a.rows([]);
  assert.deepEqual([alice.last, alice.errors, alice.lastError, bob.last], [103, 0, null, null]);
});

test("errors older than the window drop out, aged on the hub's clock (the newest record)", () => {
  const a = board();
  a.add([request("alice", 1000, 500), request("alice", 1100, 422)]);
  assert.equal(a.rows([])[0].errors, 2);
  a.add([request("kube-scheduler", 1000 + WINDOW_S + 1)]); // anyone's record moves the clock on
  const [alice] = a.rows([]);
  assert.deepEqual([alice.errors, alice.lastError.code], [1, 422]); // the message stays after the count fell
  a.add([request("kube-scheduler", 1100 + WINDOW_S + 1)]);
  assert.equal(a.rows([])[0].errors, 0);
});

test("the error times kept are bounded", () => {
  const a = board();
  a.add(Array.from({ length: MAX_ERRORS + 50 }, (_, i) => request("bob", 1 + i / 1000, 429)));
  assert.equal(a.rows([])[1].errors, MAX_ERRORS);
});

test("pods count for the attendee of their namespace: running, pending, failing by STATUS", () => {
  const pod = (ns, phase, status) => ({ ns, phase, status });
  const rows = board().rows([pod("alice", "Running", "Running"), pod("alice", "Running", "CrashLoopBackOff"),
    pod("alice", "Pending", "Pending"), pod("alice", "Pending", "ImagePullBackOff"), pod("alice", "Failed", "OOMKilled"),
    pod("alice", "Succeeded", "Completed"), pod("bob", "Running", "Running"), pod("default", "Running", "Error")]);
  assert.deepEqual(rows.map(({ name, running, pending, failing: f }) => [name, running, pending, f]),
    [["alice", 1, 1, 3], ["bob", 1, 0, 0]]);
});

test("lesson progress from the server: each row's lesson, step and verdict; a change is reported once", () => {
  const a = board();
  const step = { lesson: "02-self-healing", title: "Drop a plate", step: 2, steps: 2, step_title: "Drop one",
    check: false, watching: false, age: 1, on_step: 30 };
  assert.equal(a.setProgress({ alice: step, bob: null }), true);
  assert.equal(a.setProgress({ alice: { ...step, age: 2, on_step: 33 } }), false); // same step, same verdict, same minute
  let [alice, bob] = a.rows([]);
  assert.deepEqual([alice.lesson.step, alice.lesson.check, bob.lesson], [2, false, null]);
  assert.equal(a.setProgress({ alice: { ...step, check: true }, mallory: step }), true);
  [alice] = a.rows([]);
  assert.equal(alice.lesson.check, true);
  assert.equal(a.progress.has("mallory"), false); // not on the board: not kept
  assert.equal(a.setProgress({}), true); // the server forgot her: no stale position
  assert.equal(a.rows([])[0].lesson, null);
});
