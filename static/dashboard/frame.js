// One animation frame does all the drawing: message handlers only change the model and ask for a
// frame; each renderer runs at most once per frame, however many messages arrived meanwhile.
const pending = new Set();
let requested = false;

function run(time) {
  requested = false;
  const renderers = [...pending];
  pending.clear();
  for (const render of renderers) {
    try {
      render(time);
    } catch (error) {
      console.error(error);
    }
  }
}

export function onNextFrame(render) {
  pending.add(render);
  if (!requested) {
    requested = true;
    requestAnimationFrame(run);
  }
}
