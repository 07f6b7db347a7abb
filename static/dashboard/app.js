// The dashboard page: wires the websocket to the model, and the model to the renderers, which run
// once per animation frame. Nothing here draws on a timer: every movement follows a record or a
// change that arrived.
import { AttendeeBoard } from "./board.js";
import { ConfigsPanel } from "./configs.js";
import { CustomPanel } from "./custom.js";
import { EventsPanel } from "./events.js";
import { FailureList } from "./failures.js";
import { onNextFrame } from "./frame.js";
import { HpaPanel } from "./hpa.js";
import { JobsPanel } from "./jobs.js";
import "./lessons.js";
import "./shell.js";
import { LiveSocket } from "./live.js";
import { VersionLog } from "./log.js";
import { Model } from "./model.js";
import { NamespaceFilter } from "./namespaces.js";
import { Panels } from "./panels.js";
import { Picture } from "./picture.js";
import { PodDetail } from "./poddetail.js";
import { PoliciesPanel } from "./policies.js";
import { ForceRelist } from "./relist.js";
import { ProxyRules } from "./rules.js";
import { Timeline } from "./timeline.js";
import { StoryLine } from "./storyline.js";
import { RECORD, TrafficView } from "./traffic.js";
import { SetsPanel } from "./sets.js";
import { FrameView, WireView } from "./wire.js";
import { WallView, domLocator } from "./walls.js";
import { setMode, ui } from "./words.js";

const model = new Model();
const picture = new Picture(document.getElementById("hub-svg"));
const traffic = new TrafficView(model, picture);
const panels = new Panels(model, traffic.answered);
// NetworkPolicy's decisions: lines that stop at a wall (or pass it) over the page, and the policies in the Services panel.
const walls = new WallView({ layer: document.getElementById("traffic-dots"), locate: domLocator(picture),
  changed: () => onNextFrame(draw), viewport: () => ({ width: window.innerWidth, height: window.innerHeight }),
  podByIp: traffic.podByIp });
const policies = new PoliciesPanel(model, document.getElementById("policies"), document.getElementById("policy-list"),
  walls.tally);
const hpas = new HpaPanel(model);
const custom = new CustomPanel(model, picture);
const jobs = new JobsPanel(model);
const sets = new SetsPanel(model);
const events = new EventsPanel(model);
const failures = new FailureList();
const attendeeBoard = new AttendeeBoard(model);
const configs = new ConfigsPanel(model, document.getElementById("config-list"));
const podDetail = new PodDetail(model, document.getElementById("pod-detail"), (ns, name) =>
  document.body.dataset.podDetailUrl.replace("NS", encodeURIComponent(ns)).replace("NAME", encodeURIComponent(name)));
const rules = new ProxyRules((node) => document.body.dataset.rulesUrl.replace("NODE", encodeURIComponent(node)));
const versionLog = new VersionLog();
const wire = new WireView(() => onNextFrame(() => wire.render()));
wire.companion = new FrameView(() => onNextFrame(() => wire.render()));
const connection = document.getElementById("connection");
const namespaces = new NamespaceFilter(model, document.getElementById("ns-filter"), document.getElementById("ns-style"));
let fullRender = false;
// "What just happened" above the picture; labelled by the stage bar's badge when not live.
const storyLine = new StoryLine(model, { box: document.getElementById("narration"),
  toggle: document.getElementById("narration-toggle"),
  stage: () => ({ history: Boolean(timeline.source), ...timeline.badge() }) });

function draw() {
  const full = fullRender;
  if (fullRender) {
    fullRender = false;
    sets.renderAll();
    panels.renderAll();
    policies.renderAll();
    hpas.renderAll();
    custom.renderAll();
    jobs.renderAll();
    events.renderAll();
    configs.renderAll();
    rules.restore();
  } else {
    sets.render(); // before the panels: it peeks at the pods' changes they take
    panels.render();
    policies.render();
    hpas.render();
    custom.render();
    jobs.render();
    events.render();
    configs.render();
  }
  podDetail.render();
  failures.render();
  attendeeBoard.render();
  namespaces.render(full); // after a snapshot at once, else at most twice a second
  traffic.render();
  walls.render(); // after the panels: its lines start and end at the chips they drew
  if (model.spokesDirty) {
    picture.setSpokeStates(model.spokes);
    model.spokesDirty = false;
  }
  picture.setRevision(model.revision);
  picture.render();
  versionLog.render();
  storyLine.render(full);
  if (picture.pending()) onNextFrame(draw);
}

function receive(message) {
  relist.receive(message); // a 410 and the relist after it, shown on stage
  storyLine.receive(message); // before the model applies it: each change is told against the state before it
  if (message.t === "snapshot") {
    model.loadSnapshot(message);
    model.setSpokes(message.spokes);
    versionLog.clear();
    attendeeBoard.touch();
    fullRender = true;
  } else if (message.t === "history") {
    versionLog.add(message.items);
    model.sampleHistory(message.items);
    picture.know(new Set(message.items.map((item) => item.actor)));
  } else if (message.t === "changes") {
    const applied = model.applyChanges(message);
    versionLog.add(applied);
    picture.storeWrites(applied.length);
    if (applied.length) attendeeBoard.touch();
  } else if (message.t === "traffic") {
    // Service requests answered through a kube-proxy are drawn by the traffic view; the rest
    // are the hub's own requests and watch deliveries.
    const requests = message.records.filter((record) => record.type === RECORD.serviceRequest);
    if (requests.length) {
      traffic.add(requests);
      walls.add(requests);
    }
    picture.traffic(message.records);
    failures.add(message.records);
    attendeeBoard.add(message.records);
    rules.notice(message.records);
  } else if (message.t === "expired") {
    model.revision = null;
  }
  onNextFrame(draw);
}

// The header says "● live" only when the picture is: connected, and the stage bar plays live.
let connectionState = "connecting";
function showState(state) {
  connectionState = state;
  const live = state === "connected" && (typeof timeline === "undefined" || timeline.badge().state === "live");
  connection.dataset.state = state;
  connection.dataset.live = String(live);
  connection.textContent = state !== "connected" ? ui(state) : live ? `● ${ui("connected")}` : `● ${ui("connected-behind")}`;
}

// Every live message passes through the stage bar (pause, slow motion, the timeline), which hands
// it to `receive` now or later; the socket resumes from the newest revision it received.
const timeline = new Timeline({ model, versionLog, receive, redraw: () => { fullRender = true; onNextFrame(draw); } });
timeline.onBadge = () => showState(connectionState);
const live = new LiveSocket({ onMessage: (message) => timeline.offer(message), onState: showState,
                              revision: () => timeline.liveRevision() });
const relist = new ForceRelist({ live, picture, out: document.getElementById("relist-result"),
  revision: () => timeline.liveRevision() });
live.connect();
document.getElementById("force-relist").addEventListener("click", () => relist.start());
window.kubeKitchen = { model, picture, live, versionLog, receive, traffic, walls, policies, rules, failures, events, jobs, sets, namespaces,
  relist, timeline, storyLine, configs, podDetail, attendeeBoard };

// --- the switches ------------------------------------------------------------------------------

function chooseMode(mode) {
  setMode(mode);
  localStorage.setItem("kk-mode", mode);
  for (const button of document.querySelectorAll("[data-mode]")) {
    button.setAttribute("aria-pressed", String(button.dataset.mode === mode));
  }
  fullRender = true;
  versionLog.rebuild = true;
  onNextFrame(draw);
}

for (const button of document.querySelectorAll("[data-mode]")) {
  button.addEventListener("click", () => chooseMode(button.dataset.mode));
}
chooseMode(localStorage.getItem("kk-mode") || "k8s");

document.getElementById("log-pause").addEventListener("click", () => {
  versionLog.setPaused(!versionLog.paused);
  onNextFrame(draw);
});
document.getElementById("log-quiet").addEventListener("change", (event) => {
  versionLog.setQuiet(event.target.checked);
  onNextFrame(draw);
});

const examples = JSON.parse(document.getElementById("kk-examples").textContent);
for (const button of document.querySelectorAll("[data-example]")) {
  button.addEventListener("click", () => {
    document.getElementById("manifest-text").value = examples[button.dataset.example];
  });
}

// Buttons on objects: one POST each, sent with htmx, answered with a line in #action-result.
const actionUrl = document.body.dataset.actionUrl;
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const values = { ...button.dataset };
  delete values.action;
  button.disabled = true;
  window.htmx.ajax("POST", actionUrl.replace("ACTION", button.dataset.action), {
    target: "#action-result", swap: "innerHTML", values,
  }).finally(() => { button.disabled = false; });
});

// The policy lines follow their chips when the page or a panel scrolls, or the window changes size.
const followChips = () => { if (walls.lines.size) onNextFrame(draw); };
window.addEventListener("resize", followChips);
document.addEventListener("scroll", followChips, { capture: true, passive: true });

document.getElementById("traffic-reset").addEventListener("click", () => {
  traffic.reset();
  walls.reset();
  onNextFrame(draw);
});
