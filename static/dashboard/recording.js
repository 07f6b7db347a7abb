// Recordings: the hub's retained window as one JSON file (the dashboard's /timeline/recording/:
// the snapshot at the oldest revision and every change after it, as view models), plus the
// traffic the page saw meanwhile, to play back later in the page without a running cluster.
//
// Guarantees:
// - `parseRecording` accepts only a file of RECORDING_VERSION; anything else throws an Error whose
//   message says what is wrong (not JSON, not a recording, or made by another version).
// - `RecordingSource` answers what the hub answers the timeline (the state at revision N, the
//   changes after N) from the file alone, rebuilding the state at N in a scratch Model exactly as
//   the page's own model applies changes.
import { Model } from "./model.js";
import { ui } from "./words.js";

export const RECORDING_VERSION = "kube-kitchen-recording/1";

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));
}

export function parseRecording(text) {
  let recording;
  try {
    recording = JSON.parse(text);
  } catch (error) {
    throw new Error(fill(ui("tl-not-recording"), { why: error.message }));
  }
  if (!recording || typeof recording !== "object" || !("version" in recording)) {
    throw new Error(fill(ui("tl-not-recording"), { why: "no version tag" }));
  }
  if (recording.version !== RECORDING_VERSION) {
    throw new Error(fill(ui("tl-other-version"), { found: String(recording.version), expected: RECORDING_VERSION }));
  }
  const snapshot = recording.snapshot;
  if (!snapshot || typeof snapshot.revision !== "number" || typeof snapshot.objects !== "object"
      || !Array.isArray(recording.changes)) {
    throw new Error(fill(ui("tl-not-recording"), { why: "no snapshot or no changes" }));
  }
  return recording;
}

// The recording the page downloads: the hub's window, and the traffic batches seen inside it.
export function withTraffic(recording, batches) {
  const oldest = recording.window.oldest;
  const newest = recording.window.newest;
  return { ...recording, traffic: batches.filter((batch) => batch.rv !== null && batch.rv >= oldest && batch.rv <= newest) };
}

export function download(recording, name) {
  const blob = new Blob([JSON.stringify(recording)], { type: "application/json" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 0);
}

export class RecordingSource {
  constructor(recording, name) {
    this.recording = recording;
    this.name = name;
    this.changes = recording.changes;
    this.oldest = recording.snapshot.revision;
    this.newest = this.changes.length ? this.changes[this.changes.length - 1].rv : this.oldest;
  }

  window() {
    return { oldest: this.oldest, newest: this.newest };
  }

  // The state at `revision` as the hub's timeline answers it (or a 410-like refusal before it).
  async at(revision) {
    if (revision < this.oldest) {
      const error = new Error(`too old resource version: ${revision} (${this.oldest})`);
      error.oldest = this.oldest;
      throw error;
    }
    const scratch = new Model();
    scratch.loadSnapshot(this.recording.snapshot);
    scratch.setSpokes(this.recording.snapshot.spokes);
    const upTo = this.changes.filter((item) => item.rv <= revision);
    scratch.applyChanges({ items: upTo });
    const objects = {};
    for (const [resource, map] of Object.entries(scratch.objects)) objects[resource] = [...map.values()];
    const last = upTo[upTo.length - 1];
    return { t: "snapshot", revision: Math.min(revision, this.newest), objects, spokes: scratch.spokes,
             time: last?.time ?? this.recording.snapshot.time, window: this.window() };
  }

  // Every change after `revision`, then the traffic seen after it, each with when it happened (ms).
  async after(revision) {
    const items = this.changes.filter((item) => item.rv > revision)
      .map((item) => ({ message: { t: "changes", items: [item], revision: item.rv }, at: (item.time ?? 0) * 1000, rv: item.rv }));
    const traffic = (this.recording.traffic || []).filter((batch) => batch.rv > revision)
      .map((batch) => ({ message: { t: "traffic", records: batch.records }, at: batch.at, rv: batch.rv }));
    return [...items, ...traffic].sort((a, b) => a.rv - b.rv || a.at - b.at);
  }
}
