// 410 on stage. "Force relist" asks the page's own watch to resume from revision 1, as a client
// that was away too long would. When the hub has compacted that revision away it answers with an
// ERROR event, code 410 (Expired, "too old resource version"); the dashboard's feed tells the page
// (`{"t": "gone", ...}`), then lists again (a new snapshot) and watches from there. This shows the
// three steps in one line, and the ERROR event as a red dot from the hub to the dashboard's spoke.
// When revision 1 is still in the hub's window there is no 410: the line says so (nothing is faked).
// Any 410 the page's watch gets is shown the same way, forced or not.
import { ui } from "./words.js";

const ASK_FROM = 1;
// The spoke of the page's own watch (dashboard/hub.py's agent): "dashboard/<user>" once logged in.
const dashboardSpoke = () => document.body?.dataset.spoke || "dashboard";

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ""));
}

export class ForceRelist {
  constructor({ live, picture, out, revision }) {
    this.live = live;
    this.revision = revision;
    this.heldAt = null;
    this.picture = picture;
    this.out = out;
    this.asked = false;
    this.gone = null;
  }

  start() {
    this.asked = true;
    this.gone = null;
    this.heldAt = this.revision();
    this.show("pending", fill(ui("relist-asking"), { revision: ASK_FROM }));
    this.live.watch(ASK_FROM);
  }

  // Every message of the live socket passes here first.
  receive(message) {
    if (message.t === "gone") {
      this.gone = message;
      this.picture.signal(dashboardSpoke(), "verb-error");
      this.show("error", fill(ui("relist-gone"), message));
    } else if (message.t === "snapshot" && this.gone) {
      this.show("error", `${fill(ui("relist-gone"), this.gone)} ${fill(ui("relist-done"), message)}`);
      this.gone = null;
      this.asked = false;
    } else if (message.t === "changes" && this.asked && !this.gone
      && message.items.some((item) => item.rv <= this.heldAt)) {
      // Changes the page already held, sent again: the hub still had them, so no 410.
      this.show("ok", fill(ui("relist-kept"), { revision: ASK_FROM }));
      this.asked = false;
    }
  }

  show(kind, text) {
    const line = document.createElement("p");
    line.className = `result ${kind === "error" ? "error" : "ok"}`;
    line.dataset.action = "force-relist";
    line.dataset.state = kind;
    line.setAttribute("role", "status");
    line.title = text;
    line.textContent = text;
    this.out.replaceChildren(line);
  }
}
