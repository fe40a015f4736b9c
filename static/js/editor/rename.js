// Renaming a state in place: double-click it (or press F2) and type its title over the node.
import { t } from "../i18n.js";

export function startRename(cy, container, node, onDone) {
  const old = container.querySelector(".rename-box");
  if (old) old.remove();
  const box = node.renderedBoundingBox({ includeLabels: false });
  const input = document.createElement("input");
  input.type = "text";
  input.className = "rename-box";
  input.setAttribute("aria-label", t("State title"));
  input.value = node.data("title") ?? "";
  input.style.left = `${box.x1}px`;
  input.style.top = `${(box.y1 + box.y2) / 2 - 14}px`;
  input.style.width = `${Math.max(140, box.x2 - box.x1)}px`;
  container.appendChild(input);
  input.focus();
  input.select();
  let finished = false;
  const finish = (save) => {
    if (finished) return;
    finished = true;
    const value = input.value;
    input.remove();
    if (save) onDone(value);
  };
  input.addEventListener("keydown", (e) => {
    e.stopPropagation();
    if (e.key === "Enter") finish(true);
    if (e.key === "Escape") finish(false);
  });
  input.addEventListener("blur", () => finish(true));
}
