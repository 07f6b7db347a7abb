// The page's copy of the cluster (static/dashboard/model.js), kept as an informer keeps its cache,
// run with `node --test` on a fake document (fakedom.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { installDocument } from "./fakedom.mjs";
import { pageModule } from "./page.mjs";

const document = installDocument();
document.body.dataset.snapshotKinds = JSON.stringify(["pods", "configmaps", "events", "horizontalpodautoscalers"]);
const { Model, warningKey } = await pageModule("model.js");

const pod = (name, extra = {}) => ({ key: `default/${name}`, name, ns: "default", ...extra });
const change = (rv, type, resource, vm, name = vm?.name) => ({ rv, type, resource, ns: "default", name, vm });

function loaded() {
  const model = new Model();
  model.loadSnapshot({ revision: 10, objects: { pods: [pod("a")], configmaps: [], events: [], horizontalpodautoscalers: [] } });
  return model;
}

test("a snapshot replaces what was held; custom kinds from an older snapshot go", () => {
  const model = new Model();
  model.track("example.com/widgets").set("w", { key: "w" });
  model.loadSnapshot({ revision: 10, objects: { pods: [pod("a"), pod("b")] } });
  assert.equal(model.revision, 10);
  assert.deepEqual([...model.objects.pods.keys()], ["default/a", "default/b"]);
  assert.equal(model.objects["example.com/widgets"], undefined);
  assert.equal(model.reset, true);
});

test("changes at or below the revision held are never applied twice", () => {
  const model = loaded();
  const applied = model.applyChanges({ items: [change(9, "MODIFIED", "pods", pod("a", { phase: "old" })),
    change(11, "ADDED", "pods", pod("c")), change(11, "ADDED", "pods", pod("d"))] });
  assert.deepEqual(applied.map((item) => item.vm.name), ["c"]);
  assert.equal(model.revision, 11);
  assert.equal(model.objects.pods.get("default/a").phase, undefined);
  assert.deepEqual([...model.take("pods")], ["default/c"]);
  assert.deepEqual([...model.take("pods")], []); // taken: forgotten
});

test("a deletion removes the object and marks it changed; a custom kind gets its map on first sight", () => {
  const model = loaded();
  model.applyChanges({ items: [change(11, "DELETED", "pods", null, "a"),
    change(12, "ADDED", "example.com/widgets", { key: "default/w", name: "w" })] });
  assert.equal(model.objects.pods.has("default/a"), false);
  assert.deepEqual([...model.take("pods")], ["default/a"]);
  assert.deepEqual(model.customResources(), ["example.com/widgets"]);
});

test("the supervisor's ConfigMap sets the spokes' states instead of being listed", () => {
  const model = loaded();
  model.applyChanges({ items: [change(11, "MODIFIED", "configmaps", { key: "kube-system/spokes", name: "spokes",
    states: { scheduler: "stopped" } })] });
  assert.deepEqual(model.spokes, { scheduler: "stopped" });
  assert.equal(model.spokesDirty, true);
  assert.equal(model.objects.configmaps.size, 0);
});

test("a Warning marks its object changed and is the newest kept for it; trimming forgets it", () => {
  const model = loaded();
  const warning = (rv, reason) => ({ key: `default/e${rv}`, rv, type: "Warning", reason,
    object: { kind: "Pod", ns: "default", name: "a" } });
  model.applyChanges({ items: [change(11, "ADDED", "events", warning(11, "BackOff"), "e11")] });
  model.take("pods");
  model.applyChanges({ items: [change(12, "ADDED", "events", warning(12, "Failed"), "e12")] });
  assert.equal(model.warnings.get(warningKey("Pod", "default", "a")).reason, "Failed");
  assert.deepEqual([...model.take("pods")], ["default/a"]);
  model.applyChanges({ items: [change(13, "DELETED", "events", null, "e12")] });
  assert.equal(model.warnings.has(warningKey("Pod", "default", "a")), false);
});

test("at most 200 events are kept, the newest", () => {
  const model = loaded();
  const items = Array.from({ length: 205 }, (_, i) => change(11 + i, "ADDED", "events",
    { key: `default/e${i}`, name: `e${i}`, rv: 11 + i, type: "Normal", object: { kind: "Pod", ns: "default", name: "a" } }));
  model.applyChanges({ items });
  assert.equal(model.objects.events.size, 200);
  assert.equal(model.objects.events.has("default/e0"), false);
  assert.equal(model.objects.events.has("default/e204"), true);
});

test("an HPA's chart samples each change once, equal neighbours as one point", () => {
  const model = loaded();
  const hpa = (rv, cpu, current) => change(rv, "MODIFIED", "horizontalpodautoscalers",
    { key: "default/web", name: "web", currentCPU: cpu, current, desired: current });
  model.applyChanges({ items: [hpa(11, 50, 2), hpa(12, 50, 2), hpa(13, 90, 2)] });
  assert.deepEqual(model.hpaSamples("default/web").map((p) => p.cpu), [50, 90]);
  model.sampleHistory([{ resource: "horizontalpodautoscalers", vm: { key: "default/web", currentCPU: 10, current: 1, desired: 1 } }]);
  assert.deepEqual(model.hpaSamples("default/web").map((p) => p.cpu), [10, 50, 90]);
});

test("save and restore put back exactly what was drawn", () => {
  const model = loaded();
  const saved = model.save();
  model.applyChanges({ items: [change(11, "ADDED", "pods", pod("z"))] });
  model.restore(saved);
  assert.equal(model.revision, 10);
  assert.deepEqual([...model.objects.pods.keys()], ["default/a"]);
  assert.equal(model.reset, true);
});
