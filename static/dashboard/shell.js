// A shell in the browser: a terminal (xterm.js, vendored under static/vendor/xterm/, loaded the
// first time a shell opens) on the hub's exec websocket, spoken exactly as kubectl speaks it:
// `GET /api/v1/namespaces/NS/pods/NAME/exec?command=sh&stdin=1&stdout=1&tty=1[&container=C]` with
// the subprotocols v5.channel.k8s.io and v4.channel.k8s.io, every message one channel byte then
// the payload (stdin 0, stdout 1, stderr 2, the final Status 3, resize 4 as {"Width","Height"}).
// The hub relays it to the pod's kubelet, so the shell's request shows on the picture as the
// dashboard's (as the logged-in user's: the page offers their token as kube-apiserver's websocket
// bearer subprotocol). The session ends when the shell does (`exit`, Ctrl-D): the Status says the exit
// code, the terminal stops taking input and says so.
import { ui } from "./words.js";

export const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4 };
const encoder = new TextEncoder();

// The websocket address of an exec into a pod, on the page's own host.
export function execUrl(where, namespace, name, container, command = ["sh"]) {
  const query = new URLSearchParams();
  for (const word of command) query.append("command", word);
  for (const flag of ["stdin", "stdout", "tty"]) query.set(flag, "1");
  if (container) query.set("container", container);
  const scheme = where.protocol === "https:" ? "wss:" : "ws:";
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/exec`;
  return `${scheme}//${where.host}${path}?${query}`;
}

// kube-apiserver's websocket bearer subprotocol: a browser cannot set Authorization on a WebSocket.
export const BEARER_PROTOCOL = "base64url.bearer.authorization.k8s.io.";
export function withBearer(protocols, token) {
  if (!token) return protocols;
  const encoded = btoa(token).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return [...protocols, BEARER_PROTOCOL + encoded];
}

// The logged-in user's token (the dashboard keeps it server side and hands it over for this only).
async function sessionToken() {
  try {
    const answer = await fetch("/session/token/", { headers: { Accept: "application/json" }, credentials: "same-origin" });
    return answer.ok ? (await answer.json()).token : "";
  } catch (error) {
    return "";
  }
}

// One message: the channel byte, then the payload.
export function framed(channel, payload) {
  const bytes = typeof payload === "string" ? encoder.encode(payload) : payload;
  const out = new Uint8Array(bytes.length + 1);
  out[0] = channel;
  out.set(bytes, 1);
  return out;
}

// The exit code a final Status carries (0 for Success; null when it says none).
export function exitCode(status) {
  if (status.status === "Success") return 0;
  const cause = ((status.details || {}).causes || []).find((c) => c.reason === "ExitCode");
  return cause ? Number(cause.message) : null;
}

let loading = null;

// xterm.js and its fit addon, loaded once, when the first shell opens (the page stays light).
function loadXterm(dialog) {
  if (window.Terminal && window.FitAddon) return Promise.resolve();
  if (loading) return loading;
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = dialog.dataset.xtermCss;
  document.head.append(css);
  const script = (src) => new Promise((resolve, reject) => {
    const node = document.createElement("script");
    node.src = src;
    node.onload = resolve;
    node.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(node);
  });
  loading = Promise.all([script(dialog.dataset.xtermJs), script(dialog.dataset.fitJs)]);
  return loading;
}

export class ShellDialog {
  constructor(dialog) {
    this.dialog = dialog;
    this.title = dialog.querySelector(".shell-title");
    this.state = dialog.querySelector(".shell-state");
    this.screen = dialog.querySelector(".shell-screen");
    this.socket = null;
    this.term = null;
    dialog.querySelector(".shell-close").addEventListener("click", () => this.close());
    dialog.addEventListener("close", () => this.teardown());
    // Escape belongs to the program in the terminal (vi, less) while the session runs, not to the dialog
    dialog.addEventListener("cancel", (event) => {
      if (dialog.dataset.state === "open") event.preventDefault();
    });
    window.addEventListener("resize", () => this.fit());
  }

  async open(namespace, name, container) {
    this.teardown();
    this.title.textContent = `${ui("shell-title")} ${namespace}/${name}${container ? ` (${container})` : ""}`;
    this.setState("connecting", ui("connecting"));
    if (!this.dialog.open) this.dialog.showModal();
    await loadXterm(this.dialog);
    const term = new window.Terminal({ cursorBlink: true, fontSize: 14, convertEol: false,
      fontFamily: '"DejaVu Sans Mono", "Noto Sans Mono CJK KR", monospace', theme: { background: "#1d1f21", foreground: "#e6e6e6" } });
    const fit = new window.FitAddon.FitAddon();
    term.loadAddon(fit);
    term.open(this.screen);
    this.term = term;
    this.fitter = fit;
    this.fit();
    const socket = new WebSocket(execUrl(window.location, namespace, name, container),
      withBearer(PROTOCOLS, await sessionToken()));
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.ended = false;
    socket.addEventListener("open", () => {
      this.setState("open", ui("shell-open"));
      this.sendSize();
      term.focus();
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => this.finish(null));
    term.onData((text) => this.send(CHANNEL.stdin, text));
    term.onResize(() => this.sendSize());
  }

  receive(data) {
    const bytes = new Uint8Array(data);
    if (!bytes.length) return;
    const channel = bytes[0];
    const payload = bytes.subarray(1);
    if (channel === CHANNEL.stdout || channel === CHANNEL.stderr) {
      this.term.write(payload);
    } else if (channel === CHANNEL.error) {
      let status = {};
      try {
        status = JSON.parse(new TextDecoder().decode(payload));
      } catch (error) {
        status = { message: String(error) };
      }
      this.finish(exitCode(status), status.message);
    }
  }

  send(channel, payload) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN && !this.ended) {
      this.socket.send(framed(channel, payload));
    }
  }

  sendSize() {
    if (this.term) this.send(CHANNEL.resize, JSON.stringify({ Width: this.term.cols, Height: this.term.rows }));
  }

  fit() {
    if (this.fitter && this.dialog.open) this.fitter.fit();
  }

  // The session is over: once, with the exit code when the Status gave one, else its message
  // (the hub's or the kubelet's refusal, e.g. a container that is not running).
  finish(code, message = "") {
    if (this.ended) return;
    this.ended = true;
    let said = `${ui("shell-ended")} (${ui("shell-exit")} ${code})`;
    if (code === null) said = message || ui("shell-lost");
    this.setState("ended", said);
    if (this.term) {
      this.term.write(`\r\n\x1b[2m[${said}]\x1b[0m\r\n\x1b[?25l`); // and no cursor: nothing takes input now
      this.term.options.disableStdin = true;
    }
  }

  setState(state, text) {
    this.dialog.dataset.state = state;
    this.state.textContent = text;
  }

  close() {
    this.dialog.close();
  }

  teardown() {
    if (this.socket) {
      this.ended = true;
      this.socket.close();
      this.socket = null;
    }
    if (this.term) {
      this.term.dispose();
      this.term = null;
      this.fitter = null;
    }
  }
}

// A "shell" button on a running pod's chip (data-shell-namespace, -name, -container) opens it.
const dialog = document.getElementById("shell-dialog");
if (dialog) {
  const shell = new ShellDialog(dialog);
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-shell-name]");
    if (!button) return;
    const { shellNamespace, shellName, shellContainer } = button.dataset;
    shell.open(shellNamespace, shellName, shellContainer || "").catch((error) => {
      shell.setState("ended", String(error));
    });
  });
  window.kubeKitchenShell = shell;
}
