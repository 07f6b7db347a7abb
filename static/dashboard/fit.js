// How the hub picture fits the screen it is drawn on: the boxes its labels must keep clear of (the
// store, what the page lays over the picture) in the picture's own units, and the smallest scale
// a label may have to stay legible at the size the picture has on screen. Guarantees: every box
// is in the SVG's user units (the units labels.js works in), whatever the picture's size; a
// picture not laid out yet (no size) asks for no floor and reserves nothing.

// Screen pixels per picture unit (0 while the picture has no size).
function pixelsPerUnit(svg) {
  return svg.getScreenCTM()?.a || 0;
}

// The smallest label scale at which `name` is at least minNamePx and `counts` minCountPx tall on
// screen (their font sizes are in picture units); a hair above, so rounding never goes under.
export function labelFloor(svg, name, counts, minNamePx, minCountPx) {
  const perUnit = pixelsPerUnit(svg);
  if (!perUnit) return 0;
  const size = (text) => parseFloat(getComputedStyle(text).fontSize) || 1;
  return 1.002 * Math.max(minNamePx / (size(name) * perUnit), minCountPx / (size(counts) * perUnit));
}

// What the page lays over the picture ([data-over-picture]: its row of buttons), in the picture's
// units, `margin` wider on every side.
export function overlayBoxes(svg, margin) {
  const matrix = svg.getScreenCTM();
  if (!matrix || !matrix.a) return [];
  const inverse = matrix.inverse();
  const at = (x, y) => new DOMPoint(x, y).matrixTransform(inverse);
  return [...document.querySelectorAll("[data-over-picture]")].flatMap((element) => {
    const r = element.getBoundingClientRect();
    if (!r.width || !r.height) return [];
    const [a, b] = [at(r.left, r.top), at(r.right, r.bottom)];
    return [{ l: a.x - margin, t: a.y - margin, r: b.x + margin, b: b.y + margin }];
  });
}

// The store's cylinder and words, `margin` wider on every side.
export function storeBox(svg, margin) {
  const group = svg.querySelector("#store-spoke > g");
  const b = group.getBBox();
  const m = group.transform.baseVal.consolidate()?.matrix || { e: 0, f: 0 };
  const [x, y] = [b.x + m.e, b.y + m.f];
  return { l: x - margin, t: y - margin, r: x + b.width + margin, b: y + b.height + margin };
}

// Calls `changed` when the picture or what lies over it changes size, and when a font arrives
// (labels are measured in the page's font; a reload draws before the fonts are in).
export function whenResized(svg, changed) {
  const observer = new ResizeObserver(() => changed());
  observer.observe(svg);
  for (const element of document.querySelectorAll("[data-over-picture]")) observer.observe(element);
  document.fonts?.addEventListener("loadingdone", () => changed());
  document.fonts?.ready.then(() => changed());
}
