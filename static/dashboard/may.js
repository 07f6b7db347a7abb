// What the page's user may do at the hub, as the server asked it once for this page (access
// reviews, dashboard/access.py): which cluster controls the page draws — "cordon" (cordon and
// uncordon), "drain", "spokes" (stop/start a kubelet, the scheduler, the controller-manager).
// Guarantee: a control the user may not use is not drawn (it would only answer 403); on a page
// without the answer (#kk-may absent) every control is drawn, as before.
const element = typeof document === "undefined" ? null : document.getElementById("kk-may");
const allowed = element ? JSON.parse(element.textContent) : {};

export function may(control) {
  return allowed[control] !== false;
}
