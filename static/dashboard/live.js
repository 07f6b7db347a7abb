// The page's websocket to the dashboard: it follows list-then-watch exactly as an informer does.
// It asks for the changes after the last revision it holds (or for a snapshot when it holds none),
// reconnects after a drop and resumes from that revision (nothing missed, nothing repeated), and
// on 410 Expired forgets its revision and asks for a snapshot again.
export class LiveSocket {
  constructor({ onMessage, onState, revision }) {
    this.onMessage = onMessage;
    this.onState = onState;
    this.revision = revision;
    this.delay = 500;
    this.socket = null;
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/ws/live/`);
    this.socket = socket;
    this.onState("connecting");
    socket.onopen = () => {
      this.delay = 500;
      this.onState("connected");
      this.watch(this.revision());
    };
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.t === "expired") {
        this.onState("reloading");
        this.onMessage(message);
        this.watch(null);
        return;
      }
      if (message.t === "hub-down") this.onState("hub-down");
      else if (message.t !== "traffic") this.onState("connected");
      this.onMessage(message);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.onState("connecting");
      // Try again, a little later each time; the revision we hold makes the resume exact.
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 5000);
    };
  }

  watch(revision) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ op: "watch", revision }));
    }
  }

  // For tests and demos: drop the connection as a network would.
  drop() {
    if (this.socket) this.socket.close();
  }
}
