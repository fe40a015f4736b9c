// Keyboard shortcuts of the canvas; ignored while typing in a field.

function typing(target) {
  return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

export function installKeys(actions) {
  document.addEventListener("keydown", (e) => {
    if (typing(e.target)) return;
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    let action = null;
    if (key === "delete" || key === "backspace") action = "delete";
    else if (mod && key === "z" && e.shiftKey) action = "redo";
    else if (mod && key === "y") action = "redo";
    else if (mod && key === "z") action = "undo";
    else if (mod && key === "c") action = "copy";
    else if (mod && key === "v") action = "paste";
    else if (mod && key === "a") action = "selectAll";
    else if (mod && key === "k") action = "search";
    else if (e.key === "?") action = "shortcuts";
    else if (key === "f2") action = "rename";
    else if (key === "escape") action = "deselect";
    // On the focused canvas the arrows go from state to state and Enter opens the selected one's form.
    const onCanvas = e.target && e.target.id === "canvas";
    const arrow = { arrowleft: "left", arrowright: "right", arrowup: "up", arrowdown: "down" }[key];
    if (onCanvas && arrow && !mod) {
      e.preventDefault();
      if (actions.step) actions.step(arrow);
      return;
    }
    if (onCanvas && key === "enter") action = "open";
    if (action && actions[action]) {
      e.preventDefault();
      actions[action]();
    }
  });
}
