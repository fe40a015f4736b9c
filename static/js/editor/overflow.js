// The toolbar keeps to one line at any width and in any language: what does not fit moves, from the right
// end of the tools, into the "More" menu at the end of the tools, and comes back when there is room again.
import { t } from "../i18n.js";

/** Keep `toolbar` on one line; returns the function that fits it again. */
export function installOverflow(toolbar) {
  const spacer = toolbar.querySelector(".spacer");
  if (!spacer) return () => {};
  const wrap = document.createElement("span");
  wrap.className = "toolbar-more";
  const more = document.createElement("button");
  more.type = "button";
  more.textContent = "⋯";
  more.title = t("More tools");
  more.setAttribute("aria-label", t("More tools"));
  more.setAttribute("aria-haspopup", "true");
  more.setAttribute("aria-expanded", "false");
  const menu = document.createElement("div");
  menu.className = "toolbar-overflow";
  menu.id = "toolbar-overflow";
  menu.hidden = true;
  more.setAttribute("aria-controls", menu.id);
  wrap.append(more, menu);
  spacer.before(wrap);
  // The tools that may move, left to right, each with the element it follows when it is back in the bar.
  const tools = [...toolbar.children].filter((el) => el !== wrap && el !== spacer && !el.classList.contains("title")
    && (spacer.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING));
  const open = (on) => {
    menu.hidden = !on;
    more.setAttribute("aria-expanded", String(on));
  };
  more.addEventListener("click", () => open(menu.hidden));
  document.addEventListener("click", (e) => { if (!wrap.contains(e.target)) open(false); });
  menu.addEventListener("click", (e) => { if (e.target.closest("button, a")) open(false); });
  wrap.addEventListener("keydown", (e) => { if (e.key === "Escape" && !menu.hidden) { open(false); more.focus(); } });

  // Items of one line differ in top by their vertical alignment (a few px); a wrapped one is a line lower.
  const oneLine = () => {
    const shown = [...toolbar.children].filter((el) => el.offsetParent !== null && el.offsetHeight > 4);
    const top = Math.min(...shown.map((el) => el.offsetTop));
    return shown.every((el) => el.offsetTop - top < 18);
  };
  const fit = () => {
    for (const tool of tools) wrap.before(tool);  // all back, in their order
    wrap.hidden = true;
    if (oneLine()) return;
    wrap.hidden = false;
    const movable = tools.filter((el) => !el.hidden).reverse();
    for (const tool of movable) {
      menu.prepend(tool);
      if (oneLine()) break;
    }
    // Separators left at the end of the bar or the start of the menu separate nothing.
    while (menu.firstElementChild && menu.firstElementChild.classList.contains("sep")) wrap.before(menu.firstElementChild);
    // A menu of hidden tools only would open empty: no "⋯" then.
    if (![...menu.children].some((el) => !el.hidden && !el.classList.contains("sep"))) {
      for (const tool of [...menu.children]) wrap.before(tool);
      wrap.hidden = true;
      open(false);
    }
  };
  fit();
  // A narrower window, or a tool shown later (the language switch), makes the bar taller: fit again.
  let pending = null;
  let width = toolbar.clientWidth;
  // The save status changes its words ("Saving…", "All saved"): a shorter one may leave room for a tool back.
  const observer = new ResizeObserver(() => {
    if (toolbar.clientWidth === width && oneLine() && wrap.hidden) return;
    width = toolbar.clientWidth;
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(fit);
  });
  observer.observe(toolbar);
  const status = toolbar.querySelector("#save-status");
  if (status) observer.observe(status);
  return fit;
}
