// Room to work: the side column (form, issues and, on a laptop, the simulator under them) is as wide as the
// person drags it (or sets it with the arrow keys on its edge), can be folded away for the canvas, and the
// simulator can take the column's full height. Widths and choices are remembered in this browser.
import { t } from "../i18n.js";

const WIDTH_KEY = "botflow.sideWidth";
const FOLDED_KEY = "botflow.sideFolded";
const TALL_KEY = "botflow.simTall";
const MIN = 300;  // px: the form's fields stay usable
const CANVAS_MIN = 360;  // px the canvas keeps
const STEP = 20;  // px per arrow key

function stored(key) {
  try { return window.localStorage.getItem(key); } catch { return null; }
}

function store(key, value) {
  try { window.localStorage.setItem(key, value); } catch { /* private mode: not remembered */ }
}

/** Wire the edge between the canvas and the side column, and the fold and full-height buttons. */
export function installPanels(root, { onResize = () => {} } = {}) {
  const side = root.querySelector(".side");
  const handle = root.querySelector("[data-side-resizer]");
  const fold = root.querySelector("[data-side-fold]");
  const tall = root.querySelector("[data-sim-tall]");
  const sim = root.querySelector(".simulator");
  // On a wide screen the simulator has a column of its own beside the side column; that width is taken too.
  const beside = () => (sim && sim.offsetWidth && sim.getBoundingClientRect().left >= side.getBoundingClientRect().right - 1
    ? sim.offsetWidth : 0);
  const widest = () => Math.max(MIN, root.clientWidth - CANVAS_MIN - beside());
  const apply = (width) => {
    const w = Math.round(Math.min(widest(), Math.max(MIN, width)));
    root.style.setProperty("--side-w", `${w}px`);
    if (handle) {
      handle.setAttribute("aria-valuenow", String(w));
      handle.setAttribute("aria-valuemin", String(MIN));
      handle.setAttribute("aria-valuemax", String(widest()));
    }
    onResize();
    return w;
  };
  const saved = Number(stored(WIDTH_KEY));
  if (saved) apply(saved);
  else if (handle) handle.setAttribute("aria-valuenow", String(side.offsetWidth));
  if (handle) {
    handle.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      handle.setPointerCapture(event.pointerId);
      const right = side.getBoundingClientRect().right;
      const move = (e) => apply(right - e.clientX);
      const up = () => {
        handle.removeEventListener("pointermove", move);
        store(WIDTH_KEY, String(side.offsetWidth));
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up, { once: true });
      handle.addEventListener("pointercancel", up, { once: true });
    });
    handle.addEventListener("keydown", (event) => {
      const by = { ArrowLeft: STEP, ArrowRight: -STEP }[event.key];
      if (by === undefined) return;
      event.preventDefault();
      store(WIDTH_KEY, String(apply(side.offsetWidth + by)));
    });
  }
  const setFolded = (on) => {
    root.classList.toggle("side-folded", on);
    if (fold) {
      fold.setAttribute("aria-pressed", String(on));
      fold.title = on ? t("Show the side panels") : t("Hide the side panels: the canvas takes the width");
      fold.setAttribute("aria-label", fold.title);
    }
    store(FOLDED_KEY, on ? "yes" : "no");
    onResize();
  };
  if (fold) fold.addEventListener("click", () => setFolded(!root.classList.contains("side-folded")));
  if (stored(FOLDED_KEY) === "yes") setFolded(true);
  const setTall = (on) => {
    root.classList.toggle("sim-tall", on);
    if (tall) {
      tall.setAttribute("aria-pressed", String(on));
      tall.title = on ? t("Show the form above the simulator again") : t("Give the simulator the column's full height");
      tall.setAttribute("aria-label", tall.title);
    }
    store(TALL_KEY, on ? "yes" : "no");
    onResize();
  };
  if (tall) tall.addEventListener("click", () => setTall(!root.classList.contains("sim-tall")));
  if (stored(TALL_KEY) === "yes") setTall(true);
}
