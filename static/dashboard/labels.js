// Where a spoke's label goes on the hub picture: a box straight out from the spoke's circle (its
// nearest edge LABEL_GAP from the circle, whatever the angle: beside the circle on the sides, under
// it at the bottom), pushed further out step by step, and a little sideways along the ring, while it
// would cover anything already taken (the hub, the store, a circle, a label placed before) or leave
// the picture; and smaller, step by step, when no place fits it, but never below the floor the
// caller gives (what stays legible from the back of the room at the picture's size on screen). A
// label too wide for the room left to the picture's edge is shrunk down to that floor, never grown.
// Pure geometry in the picture's units (the SVG viewBox): no DOM here.
export const HALF_WIDTH = 630; // the viewBox reaches ±640: labels must end before that
const TOP = -420; // the viewBox's top and bottom
const BOTTOM = 430;
const LABEL_GAP = 8;
const PUSH_STEP = 6; // how far a label moves out each time it would cover something
const MAX_PUSH = 150;
const SIDEWAYS = [0, 20, -20, 40, -40, 70, -70, 100, -100, 130, -130];
const SMALLEST = 0.2;
const SHRINK = [1, 0.85, 0.7, 0.55]; // the sizes tried, of the widest that fits the picture

// A box of this width and height centred on (x, y).
export function box(x, y, width, height) {
  return { l: x - width / 2, r: x + width / 2, t: y - height / 2, b: y + height / 2 };
}

export function overlaps(a, b) {
  return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
}

function within(a) {
  return a.l >= -HALF_WIDTH && a.r <= HALF_WIDTH && a.t >= TOP && a.b <= BOTTOM;
}

// spoke: {x, y, radius, cos, sin} (cos, sin: the spoke's direction from the hub); own: the label's
// unscaled size {width, height}; size: the scale wanted; floor: the smallest scale allowed. {spot:
// the box found, scale: the one used, free: whether it covers nothing}. When nothing is free within
// MAX_PUSH at any allowed size the label takes its first place (the caller may then shorten it and
// ask again), not free.
export function labelSpot(spoke, own, size, taken, floor = SMALLEST) {
  const { x, y, radius, cos, sin } = spoke;
  const least = Math.max(SMALLEST, floor);
  // |centre x| + w/2 = base + scale * (W (1 + cos²) / 2 + |cos sin| H / 2) must not pass HALF_WIDTH.
  const base = Math.abs(x + (radius + LABEL_GAP) * cos);
  const per = (own.width * (1 + cos * cos)) / 2 + (Math.abs(cos * sin) * own.height) / 2;
  const widest = per > 0 ? Math.max(least, Math.min(Math.max(size, least), (HALF_WIDTH - base) / per)) : Math.max(size, least);
  // A tall label (the controller-manager's list of controllers) near the top may find no room at
  // its size: smaller, it may. Only when no size fits does it take its first place.
  for (const shrink of SHRINK) {
    const found = freeSpot(spoke, own, Math.max(least, widest * shrink), taken);
    if (found) return found;
  }
  const [w, h] = [own.width * widest, own.height * widest];
  const out = reach(spoke, w, h, 0);
  return { spot: box(x + out * cos, y + out * sin, w, h), scale: widest, free: false };
}

// How far from the spoke's centre a w × h label's centre sits, `extra` beyond the nearest place.
function reach({ radius, cos, sin }, w, h, extra) {
  return radius + LABEL_GAP + extra + Math.abs(cos) * (w / 2) + Math.abs(sin) * (h / 2);
}

// The first free box for the label at this scale, or null.
function freeSpot(spoke, own, scale, taken) {
  const { x, y, cos, sin } = spoke;
  const w = own.width * scale;
  const h = own.height * scale;
  for (let extra = 0; extra <= MAX_PUSH; extra += PUSH_STEP) {
    const out = reach(spoke, w, h, extra);
    for (const side of SIDEWAYS) {
      const spot = box(x + out * cos - side * sin, y + out * sin + side * cos, w, h);
      if (within(spot) && !taken.some((other) => overlaps(spot, other))) return { spot, scale, free: true };
    }
  }
  return null;
}

// Shorter forms of a spoke's name, longest first: without a note in brackets, its last part after
// a "/" or ": " ("dashboard/kubernetes-admin" -> "kubernetes-admin"), its first letters.
export function shorterNames(name) {
  const forms = [];
  const shortest = () => (forms.length ? forms[forms.length - 1] : name);
  const add = (form) => {
    if (form && form.length < shortest().length) forms.push(form);
  };
  add(name.replace(/\s*[(（].*[)）]\s*$/, ""));
  add(shortest().split(/\/|: /).pop());
  const base = shortest();
  for (const keep of [10, 7]) if (base.length > keep + 1) add(`${base.slice(0, keep)}…`);
  return forms;
}
