// A pod's detail: clicking a pod chip (not one of its buttons) opens a small panel at the side of
// the page with its containers (image, state, restarts, env variable names, mounts) and its
// Events, rendered by the server from the hub (GET pods/NS/NAME/, an htmx partial: the page never
// receives an env value or a Secret). The panel floats over the page (position: fixed): opening
// it moves nothing. It is fetched again when the pod's view model changes or a new Event about
// the pod arrives (view models are never changed in place: a new object is a change), so it
// follows the pod live without a timer. Escape or ✕ closes it; its "open shell" button is the
// same as a chip's (shell.js listens for data-shell-name).

export class PodDetail {
  constructor(model, panel, urlFor) {
    this.model = model;
    this.panel = panel;
    this.urlFor = urlFor;
    this.key = null;
    this.seen = null; // what the shown detail was fetched for: the pod's view model, newest event
    this.loading = false;
    document.addEventListener("click", (event) => {
      if (event.target.closest(".pd-close")) return this.close();
      if (event.target.closest("button, a, input, select, summary")) return;
      // A pod chip (a dense node's chips are too small to aim at), or a pod named in another panel.
      const chip = event.target.closest(".pod[data-key], [data-pod-key]");
      if (chip && !chip.closest(".node-card.dense")) this.open(chip.dataset.podKey || chip.dataset.key);
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.key) this.close();
    });
  }

  open(key) {
    this.key = key;
    this.seen = null;
    this.panel.hidden = false;
    this.panel.dataset.key = key;
    this.render();
  }

  close() {
    this.key = null;
    this.panel.hidden = true;
    this.panel.replaceChildren();
    delete this.panel.dataset.key;
  }

  // The newest Event the page holds about the shown pod (its rv), 0 when none.
  newestEvent() {
    const [ns, name] = this.key.split("/");
    let newest = 0;
    for (const vm of this.model.objects.events.values()) {
      if (vm.object.kind === "Pod" && vm.object.name === name && vm.object.ns === ns && vm.rv > newest) newest = vm.rv;
    }
    return newest;
  }

  // Called every frame: fetches the detail again when what it shows has changed.
  render() {
    if (!this.key || this.loading) return;
    const vm = this.model.objects.pods.get(this.key);
    const seen = { vm, event: this.newestEvent() };
    if (this.seen && this.seen.vm === seen.vm && this.seen.event === seen.event) return;
    this.seen = seen;
    const [ns, name] = this.key.split("/");
    this.loading = true;
    this.panel.classList.toggle("gone", !vm);
    window.htmx.ajax("GET", this.urlFor(ns, name), { target: this.panel, swap: "innerHTML" })
      .finally(() => {
        this.loading = false;
        this.render(); // a change that came while it loaded
      });
  }
}
