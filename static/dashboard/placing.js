// Placing one spoke's label on the hub picture: straight out from its circle where labels.js finds
// room, never smaller on screen than MIN_NAME_PX for its name and MIN_COUNT_PX for its counts (the
// floor fit.js works out from the picture's size). Guarantees: a label that finds no free place
// gives way step by step (its controllers' list, then one line, then a shorter name, then its
// counts alone) before it may cover another; its box is returned, in the picture's units.
import { labelFloor } from "./fit.js";
import { labelSpot, shorterNames } from "./labels.js";

const MIN_NAME_PX = 14; // on screen: a spoke's name read from the back of a room
const MIN_COUNT_PX = 12; // and its counts
const ONE_LINE_GAP = 8; // between a name and its counts on one line

// Put a spoke's label where `labelSpot` finds room (straight out from its circle, clear of what
// is `taken`), shrunk if it would run off the picture (long names, other languages). Its box.
export function placeLabel(svg, spoke, size, taken) {
  for (const text of [spoke.name, spoke.counts, spoke.controllers]) if (text) text.setAttribute("text-anchor", "middle");
  spoke.label.setAttribute("transform", "");
  lineUp(spoke);
  const floor = labelFloor(svg, spoke.name, spoke.counts, MIN_NAME_PX, MIN_COUNT_PX);
  let own = spoke.label.getBBox();
  let { spot, scale, free } = labelSpot(spoke, own, size, taken, floor);
  // The controllers under their manager are the first words to go when the label would have to
  // shrink to fit, or finds no free place at all (near the store): a readable name matters more.
  if (spoke.controllers && spoke.controllers.style.display !== "none" && (!free || scale < 0.95 * size)) {
    spoke.controllers.style.display = "none";
    own = spoke.label.getBBox();
    ({ spot, scale, free } = labelSpot(spoke, own, size, taken, floor));
  }
  // Then the name beside its counts (one line: lower, wider), then a shorter form of the name
  // (legible and clear of the others matters more than whole): "dashboard/kubernetes-admin" ->
  // "kubernetes-admin" -> "kubernetes…", over and beside its counts; at last the counts alone
  // (the spoke's tooltip still names it).
  const full = spoke.name.textContent;
  const tries = [full, ...shorterNames(full)].flatMap((name) => [[name, true], ...(name === full ? [] : [[name, false]])]);
  for (const [name, oneLine] of [...tries, ["", false]]) {
    if (free || !spoke.name.textContent) break;
    spoke.name.textContent = name;
    spoke.oneLine = oneLine;
    lineUp(spoke);
    own = spoke.label.getBBox();
    ({ spot, scale, free } = labelSpot(spoke, own, size, taken, floor));
  }
  // The label's own box centre lands on the spot's centre, relative to the spoke.
  const lx = (spot.l + spot.r) / 2 - spoke.x - (own.x + own.width / 2) * scale;
  const ly = (spot.t + spot.b) / 2 - spoke.y - (own.y + own.height / 2) * scale;
  spoke.label.setAttribute("transform", `translate(${lx.toFixed(1)},${ly.toFixed(1)}) scale(${scale.toFixed(3)})`);
  return spot;
}

// The name over its counts, or (one line) the name then its counts; counts alone centred.
function lineUp(spoke) {
  const inline = spoke.oneLine && spoke.name.textContent;
  spoke.counts.setAttribute("y", spoke.oneLine ? 0 : 34);
  spoke.counts.setAttribute("x", 0);
  spoke.name.setAttribute("x", 0);
  if (!inline) return;
  const [name, counts] = [spoke.name.getComputedTextLength(), spoke.counts.getComputedTextLength()];
  const total = name + ONE_LINE_GAP + counts;
  spoke.name.setAttribute("x", (name / 2 - total / 2).toFixed(1));
  spoke.counts.setAttribute("x", (total / 2 - counts / 2).toFixed(1));
}
