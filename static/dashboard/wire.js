// The wire view: the raw bytes of one watch response as they arrive, read the way an HTTP/1.1
// client reads them — the status line and headers, then for each chunk its size line in hex and
// the bytes it announces (here, JSON lines), until the 0-size chunk. Sizes count bytes, so the
// parser works on bytes, not characters. Only the newest lines are kept.
// Beside it, the same watch over HTTP/2 on the hub's HTTPS port (FrameView): the server sends each
// frame's header (type, stream, length, flags) and what it carried — the HEADERS' fields, a DATA
// frame's JSON — so the page shows framing where HTTP/1.1 shows chunk sizes. One button opens both.
import { ui } from "./words.js";

const KEEP = 300;
const CRLF = [13, 10];
const decoder = new TextDecoder();

function indexOfCrlf(bytes, from) {
  for (let i = from; i + 1 < bytes.length; i += 1) {
    if (bytes[i] === CRLF[0] && bytes[i + 1] === CRLF[1]) return i;
  }
  return -1;
}

export class ChunkReader {
  constructor() {
    this.buffer = new Uint8Array(0);
    this.state = "head";
    this.remaining = 0;
  }

  feed(bytes) {
    const joined = new Uint8Array(this.buffer.length + bytes.length);
    joined.set(this.buffer);
    joined.set(bytes, this.buffer.length);
    this.buffer = joined;
    const out = [];
    let progress = true;
    while (progress) progress = this.step(out);
    return out;
  }

  take(count) {
    const part = this.buffer.slice(0, count);
    this.buffer = this.buffer.slice(count);
    return part;
  }

  step(out) {
    if (this.state === "head" || this.state === "size") {
      const end = indexOfCrlf(this.buffer, 0);
      if (end < 0) return false;
      const line = decoder.decode(this.take(end));
      this.take(2);
      if (this.state === "head") {
        if (line === "") this.state = "size";
        else out.push({ kind: "header", text: line });
        return true;
      }
      const size = parseInt(line.split(";")[0], 16);
      out.push({ kind: "size", text: line, size });
      if (!size) this.state = "done";
      else {
        this.state = "data";
        this.remaining = size;
      }
      return true;
    }
    if (this.state === "data") {
      if (this.buffer.length < this.remaining + 2) return false;
      const text = decoder.decode(this.take(this.remaining));
      this.take(2);
      this.state = "size";
      for (const line of text.split("\n")) if (line) out.push({ kind: "data", text: line });
      return true;
    }
    return false;
  }
}

export class WireView {
  constructor(onData) {
    this.onData = onData;
    this.list = document.getElementById("wire-out");
    this.toggle = document.getElementById("wire-toggle");
    this.socket = null;
    this.lines = [];
    this.toggle.addEventListener("click", () => (this.socket ? this.close() : this.open()));
  }

  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    if (this.companion) this.companion.open(scheme);
    this.reader = new ChunkReader();
    this.list.replaceChildren();
    this.socket = new WebSocket(`${scheme}://${location.host}/ws/wire/`);
    this.socket.binaryType = "arraybuffer";
    this.socket.onmessage = (event) => {
      if (typeof event.data === "string") this.lines.push({ kind: "note", text: event.data });
      else this.lines.push(...this.reader.feed(new Uint8Array(event.data)));
      if (this.lines.length > KEEP) this.lines.splice(0, this.lines.length - KEEP);
      this.onData();
    };
    this.socket.onclose = () => {
      this.socket = null;
      this.toggle.setAttribute("aria-pressed", "false");
      this.toggle.textContent = ui("wire-open");
    };
    this.toggle.setAttribute("aria-pressed", "true");
    this.toggle.textContent = ui("wire-close");
  }

  close() {
    if (this.socket) this.socket.close();
    if (this.companion) this.companion.close();
  }

  render() {
    if (this.companion) this.companion.render();
    if (!this.lines.length) return;
    const fragment = document.createDocumentFragment();
    for (const line of this.lines) {
      const li = document.createElement("li");
      li.className = `wire-${line.kind}`;
      if (line.kind === "size") {
        li.textContent = line.size ? `${line.text}` : `${line.text}  (end)`;
        const note = document.createElement("span");
        note.className = "decimal";
        note.textContent = ` = ${line.size} ${ui("bytes")}`;
        li.append(note);
      } else {
        li.textContent = line.text.length > 240 ? `${line.text.slice(0, 240)}…` : line.text;
        li.title = line.text.slice(0, 2000);
      }
      fragment.append(li);
    }
    this.lines = [];
    this.list.append(fragment);
    while (this.list.childElementCount > KEEP) this.list.firstElementChild.remove();
    this.list.scrollTop = this.list.scrollHeight;
  }
}

// One HTTP/2 frame as the hub sent it: {type, stream, length, flags, headers?, text?, error?}.
export function frameLines(frame) {
  const flags = frame.flags.length ? frame.flags.join(" ") : "—";
  const head = { kind: "frame", type: frame.type, size: frame.length,
    text: `${ui("stream")} ${frame.stream} · ${ui("flags")} ${flags}` };
  const out = [head];
  for (const [name, value] of frame.headers || []) out.push({ kind: "header", text: `${name}: ${value}` });
  if (frame.text) for (const line of frame.text.split("\n")) if (line) out.push({ kind: "data", text: line });
  if (frame.error) out.push({ kind: "note", text: frame.error });
  return out;
}

export class FrameView {
  constructor(onData) {
    this.onData = onData;
    this.list = document.getElementById("wire-h2-out");
    this.socket = null;
    this.lines = [];
  }

  open(scheme) {
    if (!this.list) return;
    this.list.replaceChildren();
    this.socket = new WebSocket(`${scheme}://${location.host}/ws/wire/h2/`);
    this.socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.note) this.lines.push({ kind: "note", text: message.note });
      else this.lines.push(...frameLines(message));
      if (this.lines.length > KEEP) this.lines.splice(0, this.lines.length - KEEP);
      this.onData();
    };
    this.socket.onclose = () => {
      this.socket = null;
    };
  }

  close() {
    if (this.socket) this.socket.close();
  }

  render() {
    if (!this.lines.length || !this.list) return;
    const fragment = document.createDocumentFragment();
    for (const line of this.lines) {
      const li = document.createElement("li");
      li.className = `wire-${line.kind}`;
      li.textContent = line.text.length > 240 ? `${line.text.slice(0, 240)}…` : line.text;
      li.title = line.text.slice(0, 2000);
      if (line.kind === "frame") { // the frame header: type and length first, as the eye compares them with chunk sizes
        const note = document.createElement("span");
        note.className = "decimal";
        note.textContent = ` · ${line.text}`;
        li.replaceChildren(`${line.type} · ${line.size} ${ui("bytes")}`, note);
        li.title = `${line.type} · ${line.size} ${ui("bytes")} · ${line.text}`;
      }
      fragment.append(li);
    }
    this.lines = [];
    this.list.append(fragment);
    while (this.list.childElementCount > KEEP) this.list.firstElementChild.remove();
    this.list.scrollTop = this.list.scrollHeight;
  }
}
